package dev.kafkawire.junit;

/** A control command was refused; the message is the cluster's answer. */
public class ControlException extends FakeKafkaException {
    private static final long serialVersionUID = 1L;

    private final String command;

    /** The cluster's answer to {@code command} (its JSON line). */
    public ControlException(String message, String command) {
        super(message, null, "");
        this.command = command;
    }

    /** The command, as sent (one JSON object). */
    public String command() {
        return command;
    }
}
