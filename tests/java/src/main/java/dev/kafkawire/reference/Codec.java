package dev.kafkawire.reference;

import com.fasterxml.jackson.databind.JsonNode;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

/**
 * Kafka's own codec for a generated message class: its {@code size}/{@code write} for bytes,
 * its reading constructor, and its generated {@code *JsonConverter} for the JSON form.
 */
final class Codec {
    private Codec() {}

    private static final Map<String, Method> WRITERS = new ConcurrentHashMap<>();

    /** The bytes Kafka writes for {@code message} at {@code version}. */
    static byte[] write(Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buffer), cache, version);
        if (buffer.hasRemaining()) {
            throw new IllegalStateException("size() said " + size + " bytes, write() wrote " + buffer.position());
        }
        return buffer.array();
    }

    /**
     * Reads {@code bytes} as the class {@code className} at {@code version}, requiring every
     * byte to be consumed.
     */
    static Message read(String className, byte[] bytes, short version) throws Throwable {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        Constructor<?> constructor = Class.forName(className).getConstructor(Readable.class, short.class);
        Message message;
        try {
            message = (Message) constructor.newInstance(new ByteBufferAccessor(buffer), version);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        if (buffer.hasRemaining()) {
            throw new IllegalStateException("read left " + buffer.remaining() + " of " + bytes.length + " bytes");
        }
        return message;
    }

    /**
     * The generated JSON converter's form of {@code message}, through its {@code write(data,
     * version, serializeRecords)}. Without {@code serializeRecords} a {@code records} field
     * {@code x} is {@code xSizeInBytes}, its byte count. With it (which is what the plain {@code
     * write(data, version)} does), Kafka 4.4.0's converters write an empty binary node, JSON
     * {@code ""}, not the records. The comparison takes the count; the bytes themselves are
     * compared on the wire.
     */
    static JsonNode json(Message message, short version, boolean serializeRecords) throws Throwable {
        String converter = message.getClass().getName() + "JsonConverter";
        Method write = WRITERS.computeIfAbsent(converter, k -> {
            try {
                return Class.forName(converter).getMethod("write", message.getClass(), short.class, boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            return (JsonNode) write.invoke(null, message, version, serializeRecords);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
