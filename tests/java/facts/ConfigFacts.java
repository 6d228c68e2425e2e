// Kafka's facts about configuration names, for kafka-wire-proxy's redaction
// of configuration values (kafka-protocol/proxy/src/configs.tsv), and
// Kafka's own answer to "would the broker's request log hide this value?".
// Run as a single source file on the broker's class path:
//
//   java -cp "$(bash tests/kafka/broker.sh classpath)" tests/java/facts/ConfigFacts.java dump
//   ... ConfigFacts.java loggable < queries
//
// `dump` prints `KIND<TAB>NAME<TAB>TYPE` for every broker (`broker`: the
// broker's ConfigDef; `dynamic`: the dynamic broker configurations), topic
// and group configuration Kafka knows, and `mechanism` lines
// for the configurations a listener sets per SASL mechanism, sorted. `loggable`
// reads `RESOURCE_TYPE_ID<TAB>NAME` lines and prints, for each, `hidden` or
// `shown`: what AbstractKafkaConfig.loggableValue does with its value.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeSet;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.DynamicConfig;
import org.apache.kafka.storage.internals.log.LogConfig;

public class ConfigFacts {
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("dump")) {
            TreeSet<String> lines = new TreeSet<>();
            add(lines, "broker", AbstractKafkaConfig.CONFIG_DEF.configKeys());
            add(lines, "dynamic", DynamicConfig.Broker.configKeys());
            add(lines, "topic", LogConfig.configKeys());
            for (String name : GroupConfig.configNames()) {
                lines.add("group\t" + name + "\t" + GroupConfig.configType(name).map(Enum::name).orElse("UNKNOWN"));
            }
            // The configurations a listener may set per SASL mechanism
            // (`listener.name.L.MECHANISM.NAME`), which the broker's
            // synonyms strip back to NAME.
            java.lang.reflect.Field mechanisms =
                org.apache.kafka.server.config.DynamicBrokerConfig.class.getDeclaredField("LISTENER_MECHANISM_CONFIGS");
            mechanisms.setAccessible(true);
            for (Object name : (java.util.Set<?>) mechanisms.get(null)) {
                lines.add("mechanism\t" + name + "\t-");
            }
            lines.forEach(System.out::println);
        } else if (args.length == 1 && args[0].equals("loggable")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            StringBuilder out = new StringBuilder();
            while ((line = in.readLine()) != null) {
                String[] parts = line.split("\t", 2);
                ConfigResource.Type type = ConfigResource.Type.forId(Byte.parseByte(parts[0]));
                String value = AbstractKafkaConfig.loggableValue(type, parts[1], "v");
                out.append(value.equals("v") ? "shown" : "hidden").append('\n');
            }
            System.out.print(out);
        } else {
            System.err.println("usage: ConfigFacts dump | loggable");
            System.exit(2);
        }
    }

    private static void add(TreeSet<String> lines, String kind, Map<String, ConfigDef.ConfigKey> keys) {
        keys.forEach((name, key) -> lines.add(kind + "\t" + name + "\t" + key.type.name()));
    }
}
