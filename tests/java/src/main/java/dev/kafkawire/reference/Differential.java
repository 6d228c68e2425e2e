package dev.kafkawire.reference;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

/**
 * The differential run: Kafka's own reader on bodies that kafka-wire's tests mutated, one line in
 * and one line out per body.
 *
 * <p>Kafka's reader is the path a broker takes for a request ({@code
 * AbstractRequest.parseRequest(apiKey, version, readable)}, which reads the body and checks
 * nothing after it) and the path a client takes for a response ({@code
 * AbstractResponse.parseResponse(apiKey, readable, version)}), not a stricter read: whatever either
 * throws is a refusal. What it accepts is written back at the same version ({@code
 * request.serialize()}, or the response's data written by its generated {@code write}), so that
 * the Rust side compares the values both readers decoded by the bytes each writes.
 *
 * <pre>
 * in:  KIND \t API_KEY \t VERSION \t HEX         KIND is request or response
 * out: accept \t HEX                             read, and written back as HEX
 *      accept-sorted \t HEX                      read; written back once its unknown tagged fields
 *                                                were sorted by tag, since Kafka's writer refuses
 *                                                them out of order (its reader keeps wire order)
 *      accept-unwritable \t ERROR                read, but Kafka does not write it back
 *      refuse \t ERROR                           Kafka's reader threw
 *      refuse \t ERROR \t HEX                   the request or response class threw on a value that
 *                                                its generated data class read, and that class alone
 *                                                writes back HEX
 * </pre>
 */
final class Differential {
    private Differential() {}

    private static final HexFormat HEX = HexFormat.of();

    static void run(Path in, Path out) throws IOException {
        try (BufferedReader reader = Files.newBufferedReader(in, StandardCharsets.UTF_8);
                BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (String text = reader.readLine(); text != null; text = reader.readLine()) {
                String[] parts = text.split("\t", -1);
                writer.write(answer(parts[0].equals("request"), Short.parseShort(parts[1]),
                        Short.parseShort(parts[2]), HEX.parseHex(parts[3])));
                writer.newLine();
            }
        }
    }

    private static String answer(boolean request, short apiKey, short version, byte[] body) {
        ApiMessage data;
        ByteBufferAccessor readable = new ByteBufferAccessor(ByteBuffer.wrap(body));
        try {
            ApiKeys api = ApiKeys.forId(apiKey);
            if (request) {
                data = AbstractRequest.parseRequest(api, version, readable).request.data();
            } else {
                data = AbstractResponse.parseResponse(api, readable, version).data();
            }
        } catch (Throwable e) {
            return "refuse\t" + describe(e) + classRefusal(request, apiKey, version, body);
        }
        try {
            return "accept\t" + HEX.formatHex(Codec.write(data, version));
        } catch (Throwable first) {
            try {
                sortUnknownTags(data, new IdentityHashMap<>());
                return "accept-sorted\t" + HEX.formatHex(Codec.write(data, version));
            } catch (Throwable e) {
                return "accept-unwritable\t" + describe(first);
            }
        }
    }

    /**
     * Where the request or response class refused what its generated data class reads (a check of
     * values, such as DescribeAclsResponse's of its enums, after the bytes were read): a tab, then
     * what the data class alone writes back. Empty where the data class refuses too.
     */
    private static String classRefusal(boolean request, short apiKey, short version, byte[] body) {
        try {
            ApiKeys api = ApiKeys.forId(apiKey);
            ApiMessage data = request ? api.messageType.newRequest() : api.messageType.newResponse();
            data.read(new ByteBufferAccessor(ByteBuffer.wrap(body)), version);
            return "\t" + HEX.formatHex(Codec.write(data, version));
        } catch (Throwable e) {
            return "";
        }
    }

    private static final Comparator<RawTaggedField> BY_TAG = Comparator.comparingInt(RawTaggedField::tag);

    /**
     * Sorts the unknown tagged fields of {@code message} and of every message it holds by tag
     * (stably), as kafka-wire keeps them.
     */
    private static void sortUnknownTags(Object value, Map<Object, Boolean> seen) throws IllegalAccessException {
        if (value == null || seen.put(value, Boolean.TRUE) != null) {
            return;
        }
        if (value instanceof Collection<?> items) {
            for (Object item : items) {
                sortUnknownTags(item, seen);
            }
            return;
        }
        if (!(value instanceof Message message)) {
            return;
        }
        List<RawTaggedField> unknown = message.unknownTaggedFields();
        unknown.sort(BY_TAG);
        for (Class<?> c = value.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()) {
                    continue;
                }
                field.setAccessible(true);
                sortUnknownTags(field.get(value), seen);
            }
        }
    }

    private static String describe(Throwable e) {
        String text = e.getClass().getSimpleName() + ": " + e.getMessage();
        return text.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}
