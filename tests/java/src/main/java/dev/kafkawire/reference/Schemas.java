package dev.kafkawire.reference;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The schema files that Kafka's jars carry as resources ({@code common/message/*.json} in
 * kafka-clients, {@code common/metadata/*.json} in kafka-metadata), read into the few facts the
 * harness needs: each message's kind, api key, versions, and its fields' types, versions,
 * nullable and tagged versions and tags. The list of messages comes from the jars themselves, so
 * a message that kafka-wire lacks shows up as a failure on the Rust side, never as a silent skip.
 */
final class Schemas {
    private Schemas() {}

    /** A range of versions; {@code none} is empty. */
    record Versions(short lowest, short highest) {
        static final Versions NONE = new Versions((short) 0, (short) -1);

        static Versions parse(String text) {
            if (text == null || text.equals("none")) {
                return NONE;
            }
            if (text.endsWith("+")) {
                return new Versions(Short.parseShort(text.substring(0, text.length() - 1)), Short.MAX_VALUE);
            }
            int dash = text.indexOf('-');
            if (dash > 0) {
                return new Versions(Short.parseShort(text.substring(0, dash)), Short.parseShort(text.substring(dash + 1)));
            }
            short only = Short.parseShort(text);
            return new Versions(only, only);
        }

        boolean contains(short version) {
            return version >= lowest && version <= highest;
        }

        boolean isEmpty() {
            return highest < lowest;
        }
    }

    /** One field of a message or struct. */
    record Field(
            String name,
            String type,
            Versions versions,
            Versions nullableVersions,
            Versions taggedVersions,
            Integer tag,
            JsonNode defaultValue) {

        boolean isArray() {
            return type.startsWith("[]");
        }

        /** The element type of an array, or the type itself. */
        String elementType() {
            return isArray() ? type.substring(2) : type;
        }

        boolean isTaggedIn(short version) {
            return tag != null && taggedVersions.contains(version);
        }

        boolean isNullableIn(short version) {
            return nullableVersions.contains(version);
        }
    }

    /** A struct: the message itself, an inline struct or a common struct. */
    record Struct(String name, List<Field> fields) {
        /** The highest tag any field of this struct uses in any version, or -1. */
        int maxTag() {
            int max = -1;
            for (Field field : fields) {
                if (field.tag() != null) {
                    max = Math.max(max, field.tag());
                }
            }
            return max;
        }
    }

    /** One schema file. */
    record Message(
            String file,
            String name,
            String kind,
            Short apiKey,
            Versions validVersions,
            Versions flexibleVersions,
            boolean latestVersionUnstable,
            Struct top,
            Map<String, Struct> structs) {

        /** The generated Java class, as Kafka's generator names it. */
        String className() {
            String pkg = file.startsWith("common/metadata/")
                    ? "org.apache.kafka.common.metadata."
                    : "org.apache.kafka.common.message.";
            boolean suffixed = kind.equals("request") || kind.equals("response") || kind.equals("header");
            return pkg + name + (suffixed ? "Data" : "");
        }

        boolean isFlexible(short version) {
            return flexibleVersions.contains(version);
        }

        Struct struct(String structName) {
            Struct struct = structs.get(structName);
            if (struct == null) {
                throw new IllegalStateException(name + ": no struct " + structName);
            }
            return struct;
        }

        boolean hasRecords() {
            return hasRecords(top);
        }

        private boolean hasRecords(Struct struct) {
            for (Field field : struct.fields()) {
                if (field.type().equals("records")) {
                    return true;
                }
                if (isStructType(field.elementType()) && hasRecords(struct(field.elementType()))) {
                    return true;
                }
            }
            return false;
        }
    }

    private static final List<String> PRIMITIVES = List.of(
            "bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
            "string", "bytes", "records", "uuid");

    static boolean isStructType(String type) {
        return !PRIMITIVES.contains(type);
    }

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_JAVA_COMMENTS)
            .enable(JsonReadFeature.ALLOW_TRAILING_COMMA)
            .build();

    /** Every schema with at least one valid version, in the jars of the classes given, by name. */
    static Map<String, Message> load(Class<?>... anchors) throws IOException {
        Map<String, Message> out = new TreeMap<>();
        for (Class<?> anchor : anchors) {
            Path jar;
            try {
                jar = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
            } catch (URISyntaxException e) {
                throw new IOException(e);
            }
            try (JarFile file = new JarFile(jar.toFile())) {
                List<JarEntry> entries = new ArrayList<>();
                for (Enumeration<JarEntry> e = file.entries(); e.hasMoreElements(); ) {
                    JarEntry entry = e.nextElement();
                    String name = entry.getName();
                    if ((name.startsWith("common/message/") || name.startsWith("common/metadata/"))
                            && name.endsWith(".json")
                            && name.chars().filter(c -> c == '/').count() == 2) {
                        entries.add(entry);
                    }
                }
                for (JarEntry entry : entries) {
                    try (InputStream in = file.getInputStream(entry)) {
                        Message message = parse(entry.getName(), MAPPER.readTree(in));
                        if (!message.validVersions().isEmpty()) {
                            out.put(message.name(), message);
                        }
                    }
                }
            }
        }
        return out;
    }

    private static Message parse(String file, JsonNode root) {
        String name = root.path("name").asText();
        Map<String, Struct> structs = new LinkedHashMap<>();
        for (JsonNode common : root.path("commonStructs")) {
            structs.put(common.path("name").asText(), new Struct(common.path("name").asText(), fields(common, structs)));
        }
        Struct top = new Struct(name, fields(root, structs));
        JsonNode key = root.get("apiKey");
        return new Message(
                file,
                name,
                root.path("type").asText(),
                key == null ? null : (short) key.asInt(),
                Versions.parse(root.path("validVersions").asText("none")),
                Versions.parse(root.path("flexibleVersions").asText("none")),
                root.path("latestVersionUnstable").asBoolean(false),
                top,
                Collections.unmodifiableMap(structs));
    }

    private static List<Field> fields(JsonNode owner, Map<String, Struct> structs) {
        List<Field> out = new ArrayList<>();
        for (JsonNode node : owner.path("fields")) {
            String type = node.path("type").asText();
            JsonNode tag = node.get("tag");
            Versions tagged = Versions.parse(node.path("taggedVersions").asText("none"));
            String versions = node.has("versions") ? node.path("versions").asText() : node.path("taggedVersions").asText("none");
            Field field = new Field(
                    node.path("name").asText(),
                    type,
                    Versions.parse(versions),
                    Versions.parse(node.path("nullableVersions").asText("none")),
                    tagged,
                    tag == null ? null : Integer.valueOf(tag.asText()),
                    node.get("default"));
            if (node.has("fields")) {
                String structName = field.elementType();
                structs.put(structName, new Struct(structName, fields(node, structs)));
            }
            out.add(field);
        }
        return out;
    }
}
