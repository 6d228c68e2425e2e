package dev.kafkawire.streams;

import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** Just enough JSON to print the results: maps, lists, strings and numbers. */
final class Json {
    private Json() {}

    static void write(StringBuilder out, Object value) {
        if (value instanceof Map<?, ?> map) {
            out.append('{');
            Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
            while (entries.hasNext()) {
                Map.Entry<?, ?> entry = entries.next();
                string(out, String.valueOf(entry.getKey()));
                out.append(": ");
                write(out, entry.getValue());
                if (entries.hasNext()) {
                    out.append(", ");
                }
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(", ");
                }
                write(out, list.get(i));
            }
            out.append(']');
        } else if (value instanceof Number) {
            out.append(value);
        } else {
            string(out, String.valueOf(value));
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
