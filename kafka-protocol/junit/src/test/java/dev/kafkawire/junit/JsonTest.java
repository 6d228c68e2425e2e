package dev.kafkawire.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The control lines' JSON, both ways, and the fault counts line. */
class JsonTest {
    @Test
    void commandsAreWrittenAsTheClusterReadsThem() {
        Map<String, Object> command = new LinkedHashMap<>();
        command.put("cmd", "fault");
        command.put("spec", "produce:error=X \"quoted\"\n\u0001");
        command.put("partition", 3);
        command.put("on", true);
        command.put("to", null);
        command.put("list", Arrays.asList(1L, "a"));
        assertEquals("{\"cmd\":\"fault\",\"spec\":\"produce:error=X \\\"quoted\\\"\\n\\u0001\",\"partition\":3,"
                + "\"on\":true,\"to\":null,\"list\":[1,\"a\"]}", Json.write(command));
    }

    @Test
    void answersAreRead() {
        Object parsed = Json.parse("{\"id\":7,\"ok\":true,\"faults\":{\"error\":2,\"drop-after-records\":0},"
                + "\"requests\":[{\"api\":\"Produce\",\"version\":11}],\"x\":-1.5e2,\"s\":\"a\\u00e9\\\"\",\"n\":null}");
        Map<?, ?> answer = (Map<?, ?>) parsed;
        assertEquals(7L, answer.get("id"));
        assertEquals(Boolean.TRUE, answer.get("ok"));
        assertEquals(2L, ((Map<?, ?>) answer.get("faults")).get("error"));
        assertEquals("Produce", ((Map<?, ?>) ((List<?>) answer.get("requests")).get(0)).get("api"));
        assertEquals(-150.0, answer.get("x"));
        assertEquals("a\u00e9\"", answer.get("s"));
        assertTrue(answer.containsKey("n"));
    }

    @Test
    void whatIsNotJsonIsNamed() {
        for (String bad : new String[] {"{", "{\"a\" 1}", "[1,]", "\"open", "{\"a\":tru}", "{} x", "{\"a\":1,}"}) {
            IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
            assertTrue(error.getMessage().startsWith("not JSON at "), error.getMessage());
        }
    }

    @Test
    void theFaultCountsLineIsReadByKind() {
        Map<String, Long> counts = FakeKafkaCluster.parseFaultCounts(
                "faults error=3,delay=10,hang=0,drop-before=1,drop-after=2,move-leaders=4,move-coordinator=0,"
                        + "stop-broker=1,restart-broker=0,drop-after-records=250");
        assertEquals(10, counts.size());
        assertEquals(3L, counts.get("error"));
        assertEquals(250L, counts.get("drop-after-records"));
    }
}
