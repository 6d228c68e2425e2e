package dev.kafkawire.junit;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;
import java.util.jar.JarEntry;
import java.util.zip.CRC32;

/**
 * The {@code kafka-protocol} binary this jar carries for the platform it was
 * built on, as the resource {@code dev/kafkawire/junit/native/PLATFORM/kafka-protocol}.
 *
 * <p>It is extracted at most once per JVM, into the user's cache
 * ({@code $XDG_CACHE_HOME/kafka-wire}, else {@code ~/.cache/kafka-wire}), in a
 * folder named by the resource's CRC-32 and size as the jar records them, so
 * that the next JVM with the same jar finds it there: extracting the binary
 * (inflating about 14 MiB) took longer than the cluster's whole start. A
 * copy is checked against the jar's CRC-32 and size when it is written,
 * under a temporary name, and then renamed into place, so that JVMs
 * starting at once never run half a file; the folder is the user's alone,
 * and a copy found there is used when its size is the jar's. Where the cache cannot be written,
 * the binary goes to a temporary folder deleted when the JVM exits. The
 * system property {@code kafka.wire.binary} or the environment variable
 * {@code KAFKA_WIRE_BINARY} names another binary instead.
 */
final class NativeBinary {
    /** The system property naming another binary. */
    static final String PROPERTY = "kafka.wire.binary";
    /** The environment variable naming another binary. */
    static final String ENVIRONMENT = "KAFKA_WIRE_BINARY";

    private static Path extracted;

    private NativeBinary() {}

    /** This JVM's platform as the jar names it: {@code linux-x86_64}, {@code macos-aarch64}, {@code windows-x86_64}, ... */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName = os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "macos"
                : os.startsWith("windows") ? "windows"
                : os.replace(' ', '_');
        String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64"
                : arch;
        return osName + "-" + archName;
    }

    private static String executableName() {
        return platform().startsWith("windows-") ? "kafka-protocol.exe" : "kafka-protocol";
    }

    /** The binary's path, extracting it on the first call when no cached copy matches. */
    static synchronized Path path() {
        String override = System.getProperty(PROPERTY);
        if (override == null || override.isEmpty()) {
            override = System.getenv(ENVIRONMENT);
        }
        if (override != null && !override.isEmpty()) {
            Path path = Paths.get(override);
            if (!Files.isExecutable(path)) {
                throw new FakeKafkaException(override + " (from " + PROPERTY + " or " + ENVIRONMENT
                        + ") is not an executable file", null, "");
            }
            return path;
        }
        if (extracted != null && Files.isExecutable(extracted)) {
            return extracted;
        }
        String resource = "native/" + platform() + "/" + executableName();
        URL url = NativeBinary.class.getResource(resource);
        if (url == null) {
            throw new FakeKafkaException("kafka-wire-fake-junit carries no kafka-protocol binary for "
                    + platform() + " (the resource dev/kafkawire/junit/" + resource
                    + "): this jar was built on another platform; build it on this one, or name a binary with -D"
                    + PROPERTY + "=PATH", null, "");
        }
        try {
            extracted = extract(url);
            return extracted;
        } catch (IOException e) {
            throw new FakeKafkaException("cannot extract the kafka-protocol binary: " + e.getMessage(), e);
        }
    }

    /** The resource at {@code url} as an executable file: a cached copy, or a new one. */
    private static Path extract(URL url) throws IOException {
        URLConnection connection = url.openConnection();
        connection.setUseCaches(false);
        JarEntry entry = connection instanceof JarURLConnection ? ((JarURLConnection) connection).getJarEntry() : null;
        Path cache = cacheFolder();
        if (entry != null && entry.getCrc() >= 0 && entry.getSize() >= 0 && cache != null) {
            String key = String.format("%08x-%d", entry.getCrc(), entry.getSize());
            Path binary = cache.resolve(key).resolve(executableName());
            if (Files.isRegularFile(binary) && Files.isExecutable(binary) && Files.size(binary) == entry.getSize()) {
                return binary;
            }
            try {
                Files.createDirectories(binary.getParent());
                Path partial = Files.createTempFile(binary.getParent(), "partial-", "");
                try {
                    write(url, partial);
                    if (!matches(partial, entry.getCrc(), entry.getSize())) {
                        throw new IOException("the binary extracted does not match the jar's CRC-32 and size");
                    }
                    try {
                        Files.move(partial, binary, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } catch (AtomicMoveNotSupportedException e) {
                        Files.move(partial, binary, StandardCopyOption.REPLACE_EXISTING);
                    }
                    return binary;
                } finally {
                    Files.deleteIfExists(partial);
                }
            } catch (IOException | SecurityException e) {
                // The cache cannot be written: a temporary copy instead.
            }
        }
        Path dir = Files.createTempDirectory("kafka-wire-");
        Path binary = dir.resolve(executableName());
        write(url, binary);
        dir.toFile().deleteOnExit();
        binary.toFile().deleteOnExit();
        return binary;
    }

    /** Copies the resource to {@code target} and makes it executable by its owner. */
    private static void write(URL url, Path target) throws IOException {
        URLConnection connection = url.openConnection();
        connection.setUseCaches(false);
        try (InputStream in = connection.getInputStream()) {
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        if (!target.toFile().setExecutable(true, true)) {
            throw new IOException("cannot make " + target + " executable");
        }
    }

    /** Whether {@code file} is an executable of {@code size} bytes whose CRC-32 is {@code crc}. */
    private static boolean matches(Path file, long crc, long size) {
        try {
            if (!Files.isRegularFile(file) || !Files.isExecutable(file) || Files.size(file) != size) {
                return false;
            }
            CRC32 sum = new CRC32();
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
                while (channel.read(buffer) > 0) {
                    buffer.flip();
                    sum.update(buffer);
                    buffer.clear();
                }
            }
            return sum.getValue() == crc;
        } catch (IOException e) {
            return false;
        }
    }

    /** The user's cache folder for the binary, made private to the user; null where there is none. */
    private static Path cacheFolder() {
        try {
            String xdg = System.getenv("XDG_CACHE_HOME");
            Path base = xdg != null && !xdg.isEmpty() ? Paths.get(xdg)
                    : Paths.get(System.getProperty("user.home"), ".cache");
            Path folder = base.resolve("kafka-wire");
            Files.createDirectories(folder);
            try {
                Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwx------"));
            } catch (UnsupportedOperationException e) {
                // Not a POSIX file system: the user's own folder keeps it.
            }
            return folder;
        } catch (IOException | SecurityException | java.nio.file.InvalidPathException e) {
            return null;
        }
    }
}
