package dev.kafkawire.junit;

/**
 * {@code kafka-protocol fake} refused its settings, could not start, or
 * ended unexpectedly. The message is the command's own.
 */
public class FakeKafkaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Integer exitCode;
    private final String stderr;

    /** An error with the command's message, its exit status (or null) and the end of its standard error. */
    public FakeKafkaException(String message, Integer exitCode, String stderr) {
        super(message);
        this.exitCode = exitCode;
        this.stderr = stderr == null ? "" : stderr;
    }

    /** An error of this side, with a cause. */
    public FakeKafkaException(String message, Throwable cause) {
        super(message, cause);
        this.exitCode = null;
        this.stderr = "";
    }

    /** The command's exit status, or null while it runs (or when it was never started). */
    public Integer exitCode() {
        return exitCode;
    }

    /** The end of the command's standard error. */
    public String stderr() {
        return stderr;
    }
}
