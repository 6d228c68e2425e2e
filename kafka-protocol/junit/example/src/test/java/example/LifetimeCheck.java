package example;

import static org.junit.jupiter.api.Assertions.fail;

import dev.kafkawire.junit.FakeKafka;
import dev.kafkawire.junit.FakeKafkaCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;

/**
 * Not part of the example run (surefire's default names leave it out): the
 * paths on which a test process ends, each run alone by the repository's
 * package test (tests/tests/ecosystem_packages.rs, `-Dtest=LifetimeCheck#...`),
 * which then checks by its process id that the cluster did not outlive it.
 * The id goes to $KAFKA_WIRE_PID_FILE.
 */
class LifetimeCheck {
    static void writePid(FakeKafkaCluster kafka) throws Exception {
        Path file = Paths.get(System.getenv("KAFKA_WIRE_PID_FILE"));
        Path tmp = Paths.get(file + ".tmp");
        Files.writeString(tmp, Long.toString(kafka.pid()));
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    @FakeKafka(brokers = 1)
    void fails(FakeKafkaCluster kafka) throws Exception {
        writePid(kafka);
        fail("this test fails on purpose");
    }

    @Test
    @FakeKafka(brokers = 1)
    void waits(FakeKafkaCluster kafka) throws Exception {
        writePid(kafka);
        Thread.sleep(120_000);
    }
}
