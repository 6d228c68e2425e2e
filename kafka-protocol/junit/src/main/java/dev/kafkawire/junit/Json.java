package dev.kafkawire.junit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the control lines need, so that the extension brings no
 * JSON library into its users' test class paths: objects of strings,
 * numbers, booleans, nulls, lists and maps written; any JSON value read
 * (objects as {@link LinkedHashMap}, arrays as {@link ArrayList}, integers as
 * {@link Long}, other numbers as {@link Double}).
 */
final class Json {
    private Json() {}

    /** {@code value} as JSON text. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string((String) value, out);
        } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer
                || value instanceof Short || value instanceof Byte) {
            out.append(value);
        } else if (value instanceof Number) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("not a JSON number: " + value);
            }
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(String.valueOf(entry.getKey()), out);
                out.append(':');
                write(entry.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Iterable) {
            out.append('[');
            boolean first = true;
            for (Object item : (Iterable<?>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(item, out);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("no JSON form for a " + value.getClass().getName());
        }
    }

    private static void string(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /** The value of one JSON text; {@link IllegalArgumentException} names where it is not JSON. */
    static Object parse(String text) {
        Parser parser = new Parser(text);
        Object value = parser.value();
        parser.space();
        if (parser.at < text.length()) {
            throw parser.error("text after the value");
        }
        return value;
    }

    private static final class Parser {
        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("not JSON at " + at + ": " + what + ": " + text);
        }

        void space() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        char peek() {
            space();
            if (at >= text.length()) {
                throw error("the text ends");
            }
            return text.charAt(at);
        }

        void expect(char c) {
            if (peek() != c) {
                throw error("'" + c + "' expected");
            }
            at++;
        }

        Object value() {
            char c = peek();
            switch (c) {
                case '{': return object();
                case '[': return array();
                case '"': return string();
                case 't': return word("true", Boolean.TRUE);
                case 'f': return word("false", Boolean.FALSE);
                case 'n': return word("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw error("unexpected '" + c + "'");
            }
        }

        Object word(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw error(word + " expected");
            }
            at += word.length();
            return value;
        }

        Map<String, Object> object() {
            expect('{');
            Map<String, Object> map = new LinkedHashMap<>();
            if (peek() == '}') {
                at++;
                return map;
            }
            while (true) {
                if (peek() != '"') {
                    throw error("a key expected");
                }
                String key = string();
                expect(':');
                map.put(key, value());
                char c = peek();
                at++;
                if (c == '}') {
                    return map;
                }
                if (c != ',') {
                    at--;
                    throw error("',' or '}' expected");
                }
            }
        }

        List<Object> array() {
            expect('[');
            List<Object> list = new ArrayList<>();
            if (peek() == ']') {
                at++;
                return list;
            }
            while (true) {
                list.add(value());
                char c = peek();
                at++;
                if (c == ']') {
                    return list;
                }
                if (c != ',') {
                    at--;
                    throw error("',' or ']' expected");
                }
            }
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (at < text.length()) {
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (at >= text.length()) {
                    break;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        if (at + 4 > text.length()) {
                            throw error("a short \\u escape");
                        }
                        try {
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException bad) {
                            throw error("a bad \\u escape");
                        }
                        at += 4;
                        break;
                    default:
                        throw error("a bad escape");
                }
            }
            throw error("the string is not closed");
        }

        Number number() {
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            String digits = text.substring(start, at);
            try {
                if (digits.indexOf('.') < 0 && digits.indexOf('e') < 0 && digits.indexOf('E') < 0) {
                    return Long.parseLong(digits);
                }
                return Double.parseDouble(digits);
            } catch (NumberFormatException bad) {
                at = start;
                throw error("a bad number");
            }
        }
    }
}
