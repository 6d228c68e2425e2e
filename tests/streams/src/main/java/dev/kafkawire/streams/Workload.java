package dev.kafkawire.streams;

/**
 * The deterministic input of the application, one definition that the
 * {@code prepare} step writes and the {@code run} step counts on. The Rust
 * test (tests/tests/streams_app.rs) computes the expected output from the
 * same numbers on its own: keep the two in step.
 *
 * <ul>
 *   <li>{@code SENTENCES} sentences of {@code WORDS_PER_SENTENCE} words:
 *       sentence i has key {@code s<i>}, and its word j is
 *       {@code w<(7i + 13j) mod VOCABULARY>}, two digits.</li>
 *   <li>{@code LEFT} records on the left of the join: key {@code l<i>},
 *       value {@code k<i mod KEYS>|l<i>}, timestamp base + 1000 i.</li>
 *   <li>{@code RIGHT} records on the right: key {@code r<j>}, value
 *       {@code k<3j mod KEYS>|r<j>}, timestamp base + 1000 j + 500.</li>
 *   <li>The join pairs a left and a right record of the same {@code k}
 *       whose timestamps are at most {@code WINDOW_MS} apart.</li>
 * </ul>
 */
final class Workload {
    private Workload() {}

    static final int SENTENCES = 1200;
    static final int WORDS_PER_SENTENCE = 5;
    static final int VOCABULARY = 40;
    static final int LEFT = 300;
    static final int RIGHT = 300;
    static final int KEYS = 20;
    static final long WINDOW_MS = 5_000;

    /** Partitions of the input topics: the join's two differ, so that both are repartitioned. */
    static final int SENTENCE_PARTITIONS = 3;
    static final int LEFT_PARTITIONS = 3;
    static final int RIGHT_PARTITIONS = 2;
    static final int OUTPUT_PARTITIONS = 2;

    static String word(int sentence, int position) {
        return String.format("w%02d", (7 * sentence + 13 * position) % VOCABULARY);
    }

    static String sentence(int i) {
        StringBuilder s = new StringBuilder();
        for (int j = 0; j < WORDS_PER_SENTENCE; j++) {
            if (j > 0) {
                s.append(' ');
            }
            s.append(word(i, j));
        }
        return s.toString();
    }

    static int leftKey(int i) {
        return i % KEYS;
    }

    static int rightKey(int j) {
        return (3 * j) % KEYS;
    }

    static long leftTime(long base, int i) {
        return base + 1000L * i;
    }

    static long rightTime(long base, int j) {
        return base + 1000L * j + 500;
    }

    /** The number of word-count updates: one per word. */
    static int expectedCounts() {
        return SENTENCES * WORDS_PER_SENTENCE;
    }

    /** The number of joined records. */
    static int expectedJoined() {
        int pairs = 0;
        for (int i = 0; i < LEFT; i++) {
            for (int j = 0; j < RIGHT; j++) {
                if (leftKey(i) == rightKey(j) && Math.abs(leftTime(0, i) - rightTime(0, j)) <= WINDOW_MS) {
                    pairs++;
                }
            }
        }
        return pairs;
    }

    /** Every input record: sentences, left and right. */
    static int inputRecords() {
        return SENTENCES + LEFT + RIGHT;
    }

    static String sentencesTopic(String prefix) {
        return prefix + "-sentences";
    }

    static String leftTopic(String prefix) {
        return prefix + "-left";
    }

    static String rightTopic(String prefix) {
        return prefix + "-right";
    }

    static String countsTopic(String prefix, String protocol) {
        return prefix + "-" + protocol + "-counts";
    }

    static String joinedTopic(String prefix, String protocol) {
        return prefix + "-" + protocol + "-joined";
    }
}
