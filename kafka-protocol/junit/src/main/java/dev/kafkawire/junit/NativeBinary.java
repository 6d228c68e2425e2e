package dev.kafkawire.junit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * The {@code kafka-protocol} binary this jar carries for the platform it was
 * built on, as the resource {@code dev/kafkawire/junit/native/PLATFORM/kafka-protocol},
 * extracted once per JVM into a temporary folder (deleted when the JVM
 * exits). The system property {@code kafka.wire.binary} or the environment
 * variable {@code KAFKA_WIRE_BINARY} names another binary instead.
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

    /** The binary's path, extracting it on the first call. */
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
        try (InputStream in = NativeBinary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new FakeKafkaException("kafka-wire-fake-junit carries no kafka-protocol binary for "
                        + platform() + " (the resource dev/kafkawire/junit/" + resource
                        + "): this jar was built on another platform; build it on this one, or name a binary with -D"
                        + PROPERTY + "=PATH", null, "");
            }
            Path dir = Files.createTempDirectory("kafka-wire-");
            Path binary = dir.resolve(executableName());
            Files.copy(in, binary, StandardCopyOption.REPLACE_EXISTING);
            if (!binary.toFile().setExecutable(true, true)) {
                throw new FakeKafkaException("cannot make " + binary + " executable", null, "");
            }
            dir.toFile().deleteOnExit();
            binary.toFile().deleteOnExit();
            extracted = binary;
            return binary;
        } catch (IOException e) {
            throw new FakeKafkaException("cannot extract the kafka-protocol binary: " + e.getMessage(), e);
        }
    }
}
