package dev.kafkawire.reference;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * Builds instances of Kafka's generated message classes by reflection, field by field as the
 * schema describes them, from a seeded random source. Each {@link Mode} stresses something
 * else: tagged fields at their default, all set or mixed; null wherever a version allows it;
 * empty and long collections; integer extremes; non-ASCII and long strings; the zero uuid;
 * unknown tagged fields; real record batches in {@code records} fields.
 */
final class Values {
    /** What one instance stresses. The instance number picks the mode. */
    enum Mode {
        /**
         * A fresh instance: every field at its default, except that {@code records} a version
         * does not let be null are empty (Java cannot write them null).
         */
        DEFAULTS("defaults", Tagged.NONE, Nulls.NEVER, Arrays.EMPTY, false),
        /** Every field set, tagged ones included; no nulls; two-element collections. */
        ALL_SET("all-set", Tagged.ALL, Nulls.NEVER, Arrays.TWO, false),
        /** Tagged fields set or left at default at random; some nulls. */
        TAGGED_MIXED("tagged-mixed", Tagged.MIXED, Nulls.SOMETIMES, Arrays.SMALL, false),
        /** Null wherever the version allows it. */
        NULLS("nulls", Tagged.ALL, Nulls.ALWAYS, Arrays.SMALL, false),
        /** Integer extremes, non-ASCII strings, the zero uuid, one-element collections. */
        EXTREMES("extremes", Tagged.ALL, Nulls.NEVER, Arrays.ONE, false),
        /** Empty strings, bytes, records and collections, never null. */
        EMPTY("empty", Tagged.MIXED, Nulls.NEVER, Arrays.EMPTY, false),
        /** Unknown tagged fields in every struct of a flexible version. */
        UNKNOWN_TAGS("unknown-tags", Tagged.MIXED, Nulls.SOMETIMES, Arrays.SMALL, true),
        /**
         * One long top-level collection and some long strings and bytes (two-byte compact
         * lengths), and unknown tagged fields.
         */
        LONG("long", Tagged.ALL, Nulls.SOMETIMES, Arrays.LONG, true),
        /**
         * Not one of the eight: every {@code records} field null, even in versions where it
         * is not nullable, which Java refuses to write (a named exception on the Rust side).
         */
        NULL_RECORDS("null-records", Tagged.ALL, Nulls.NEVER, Arrays.ONE, false);

        /** The modes of the instances, in instance order. */
        static final Mode[] REGULAR = {DEFAULTS, ALL_SET, TAGGED_MIXED, NULLS, EXTREMES, EMPTY, UNKNOWN_TAGS, LONG};

        final String label;
        final Tagged tagged;
        final Nulls nulls;
        final Arrays arrays;
        final boolean unknownTags;

        Mode(String label, Tagged tagged, Nulls nulls, Arrays arrays, boolean unknownTags) {
            this.label = label;
            this.tagged = tagged;
            this.nulls = nulls;
            this.arrays = arrays;
            this.unknownTags = unknownTags;
        }
    }

    enum Tagged { NONE, ALL, MIXED }

    enum Nulls { NEVER, SOMETIMES, ALWAYS }

    enum Arrays { EMPTY, ONE, TWO, SMALL, LONG }

    private static final String[] NON_ASCII = {
        "é", "ß", "✓", "日本語", "Ωμέγα", "🦀", "naïve café", "\u0000", "ü€", "ℝ²"
    };

    /** The depth the elements of a long array are built at, so that they stay small. */
    private static final int LONG_ELEMENT_DEPTH = 10;

    private static final Map<String, Method> SETTERS = new ConcurrentHashMap<>();

    private final Schemas.Message message;
    private final short version;
    private final Mode mode;
    private final SplittableRandom random;
    private final String topClass;
    private boolean longArrayMade;

    Values(Schemas.Message message, short version, Mode mode, long seed) {
        this.message = message;
        this.version = version;
        this.mode = mode;
        this.random = new SplittableRandom(seed);
        this.topClass = message.className();
    }

    /** A new instance of the message. */
    Object build() throws ReflectiveOperationException {
        return struct(Class.forName(topClass), message.top(), 0);
    }

    private Object struct(Class<?> type, Schemas.Struct struct, int depth) throws ReflectiveOperationException {
        Object instance = type.getConstructor().newInstance();
        for (Schemas.Field field : struct.fields()) {
            if (!field.versions().contains(version)) {
                continue;
            }
            if (field.isTaggedIn(version) && !setTagged()) {
                continue;
            }
            Method setter = setter(type, field);
            if (mode == Mode.DEFAULTS) {
                // Only what Java cannot write at its default: a null records value in a
                // version where it is not nullable is written as empty.
                if (field.type().equals("records") && !field.isNullableIn(version)) {
                    setter.invoke(instance, MemoryRecords.EMPTY);
                } else if (!field.isArray() && Schemas.isStructType(field.type())) {
                    setter.invoke(instance, struct(nested(field.type()), message.struct(field.type()), depth + 1));
                }
                continue;
            }
            setter.invoke(instance, field(field, setter.getParameterTypes()[0], depth));
        }
        if (mode.unknownTags && message.isFlexible(version)) {
            List<RawTaggedField> unknown = ((org.apache.kafka.common.protocol.Message) instance).unknownTaggedFields();
            int tag = struct.maxTag() + 1 + random.nextInt(3);
            for (int i = 0, n = 1 + random.nextInt(2); i < n; i++) {
                unknown.add(new RawTaggedField(tag, bytes(random.nextInt(6))));
                tag += 1 + random.nextInt(200);
            }
        }
        return instance;
    }

    private boolean setTagged() {
        return switch (mode.tagged) {
            case NONE -> false;
            case ALL -> true;
            case MIXED -> random.nextBoolean();
        };
    }

    private boolean wantNull(Schemas.Field field) {
        if (!field.isNullableIn(version)) {
            return false;
        }
        return switch (mode.nulls) {
            case NEVER -> false;
            case ALWAYS -> true;
            case SOMETIMES -> random.nextInt(4) == 0;
        };
    }

    private Object field(Schemas.Field field, Class<?> parameter, int depth) throws ReflectiveOperationException {
        if (mode == Mode.NULL_RECORDS && field.type().equals("records")) {
            return null;
        }
        if (wantNull(field)) {
            return null;
        }
        if (field.isArray()) {
            String element = field.elementType();
            int count = count(depth);
            Collection<Object> items = newCollection(parameter);
            for (int i = 0; i < count; i++) {
                if (Schemas.isStructType(element)) {
                    // Elements of long arrays stay small.
                    items.add(struct(nested(element), message.struct(element),
                            count > 8 ? LONG_ELEMENT_DEPTH : depth + 1));
                } else {
                    items.add(scalar(element, elementClass(element), depth + 1));
                }
            }
            return items;
        }
        if (Schemas.isStructType(field.type())) {
            return struct(nested(field.type()), message.struct(field.type()), depth + 1);
        }
        return scalar(field.type(), parameter, depth);
    }

    private int count(int depth) {
        return switch (mode.arrays) {
            case EMPTY -> 0;
            case ONE -> 1;
            case TWO -> depth > 3 ? 1 : 2;
            case SMALL -> random.nextInt(depth > 3 ? 2 : 4);
            // One top-level array per instance is long, past the 127 elements that a one-byte
            // compact count holds.
            case LONG -> depth == 0 && !longArrayMade && (longArrayMade = true)
                    ? 127 + random.nextInt(4)
                    : random.nextInt(depth > 3 ? 2 : 3);
        };
    }

    @SuppressWarnings("unchecked")
    private static Collection<Object> newCollection(Class<?> parameter) throws ReflectiveOperationException {
        if (parameter.isAssignableFrom(ArrayList.class)) {
            return new ArrayList<>();
        }
        // A map-keyed array: the generated ImplicitLinkedHashMultiCollection subclass, which
        // keeps duplicate keys and insertion order, as the wire does.
        return (Collection<Object>) parameter.getConstructor().newInstance();
    }

    private static Class<?> elementClass(String element) {
        return switch (element) {
            case "bool" -> Boolean.class;
            case "int8" -> Byte.class;
            case "int16" -> Short.class;
            case "uint16", "int32" -> Integer.class;
            case "uint32", "int64" -> Long.class;
            case "float64" -> Double.class;
            case "string" -> String.class;
            case "uuid" -> Uuid.class;
            default -> throw new IllegalArgumentException("no arrays of " + element);
        };
    }

    private Class<?> nested(String structName) throws ClassNotFoundException {
        return Class.forName(topClass + "$" + structName);
    }

    private static Method setter(Class<?> type, Schemas.Field field) {
        // Kafka's generator capitalizes the first letter: `timeoutMs` has `setTimeoutMs`.
        String name = "set" + Character.toUpperCase(field.name().charAt(0)) + field.name().substring(1);
        return SETTERS.computeIfAbsent(type.getName() + "#" + name, k -> {
            for (Method method : type.getMethods()) {
                if (method.getName().equals(name) && method.getParameterCount() == 1) {
                    return method;
                }
            }
            throw new IllegalStateException(type.getName() + " has no " + name);
        });
    }

    private Object scalar(String type, Class<?> want, int depth) {
        boolean extreme = mode == Mode.EXTREMES;
        boolean empty = mode == Mode.EMPTY;
        // In LONG mode, one string or bytes value in three is long, outside the elements of a
        // long array (which would make the instance large, and tell nothing more).
        boolean longer = mode == Mode.LONG && depth < LONG_ELEMENT_DEPTH && random.nextInt(3) == 0;
        return switch (type) {
            case "bool" -> extreme || random.nextBoolean();
            case "int8" -> (byte) integer(Byte.MIN_VALUE, Byte.MAX_VALUE);
            case "int16" -> (short) integer(Short.MIN_VALUE, Short.MAX_VALUE);
            case "uint16" -> (int) integer(0, 0xffff);
            case "int32" -> (int) integer(Integer.MIN_VALUE, Integer.MAX_VALUE);
            case "uint32" -> integer(0, 0xffff_ffffL);
            case "int64" -> integer(Long.MIN_VALUE, Long.MAX_VALUE);
            case "float64" -> float64();
            case "string" -> string(longer);
            case "uuid" -> uuid();
            case "bytes" -> {
                byte[] b = bytes(empty ? 0 : longer ? 127 + random.nextInt(80) : random.nextInt(9));
                yield want == ByteBuffer.class ? ByteBuffer.wrap(b) : b;
            }
            case "records" -> empty ? MemoryRecords.EMPTY : Batches.forMessage(random);
            default -> throw new IllegalArgumentException("unknown type " + type);
        };
    }

    private long integer(long min, long max) {
        if (mode == Mode.EXTREMES) {
            long[] picks = {min, max, min, max, 0, -1, 1};
            long pick = picks[random.nextInt(picks.length)];
            return pick < min ? min : pick;
        }
        if (mode == Mode.EMPTY) {
            return 0;
        }
        return switch (random.nextInt(4)) {
            case 0 -> Math.max(min, Math.min(max, random.nextInt(-2, 300)));
            case 1 -> min + (long) (random.nextDouble() * ((double) max - (double) min));
            default -> min == Long.MIN_VALUE ? random.nextLong() : random.nextLong(min, max == Long.MAX_VALUE ? max : max + 1);
        };
    }

    private double float64() {
        if (mode == Mode.EXTREMES) {
            double[] picks = {Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE, -0.0, Double.NaN,
                Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1e300, 4.9e-324};
            return picks[random.nextInt(picks.length)];
        }
        if (mode == Mode.EMPTY) {
            return 0.0;
        }
        return switch (random.nextInt(3)) {
            case 0 -> random.nextInt(1000);
            case 1 -> random.nextDouble() * 1e6 - 5e5;
            default -> Double.longBitsToDouble(random.nextLong() & 0x7fef_ffff_ffff_ffffL);
        };
    }

    private String string(boolean longer) {
        switch (longer ? Mode.LONG : mode == Mode.LONG ? Mode.ALL_SET : mode) {
            case EMPTY:
                return "";
            case EXTREMES:
                return NON_ASCII[random.nextInt(NON_ASCII.length)] + NON_ASCII[random.nextInt(NON_ASCII.length)];
            case LONG: {
                StringBuilder out = new StringBuilder();
                int length = 128 + random.nextInt(40);
                while (out.length() < length) {
                    out.append(random.nextInt(5) == 0 ? NON_ASCII[random.nextInt(NON_ASCII.length)] : "kafka-wire-");
                }
                return out.toString();
            }
            default: {
                StringBuilder out = new StringBuilder();
                for (int i = 0, n = random.nextInt(9); i < n; i++) {
                    if (random.nextInt(6) == 0) {
                        out.append(NON_ASCII[random.nextInt(NON_ASCII.length)]);
                    } else {
                        out.append((char) ('a' + random.nextInt(26)));
                    }
                }
                return out.toString();
            }
        }
    }

    private Uuid uuid() {
        if (mode == Mode.EXTREMES || mode == Mode.EMPTY || random.nextInt(5) == 0) {
            return Uuid.ZERO_UUID;
        }
        return new Uuid(random.nextLong(), random.nextLong());
    }

    private byte[] bytes(int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            out[i] = (byte) random.nextInt(256);
        }
        return out;
    }
}
