package dev.millrace.ra.inbound;

import java.beans.IntrospectionException;
import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.millrace.jms.MillraceConnectionFactory;
import dev.millrace.protocol.selector.Selector;
import dev.millrace.protocol.selector.SelectorSyntaxException;
import jakarta.resource.ResourceException;
import jakarta.resource.spi.ActivationSpec;
import jakarta.resource.spi.InvalidPropertyException;
import jakarta.resource.spi.ResourceAdapter;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;

/**
 * The activation of one message-driven bean: its {@code @ActivationConfigProperty} values (or
 * {@code ejb-jar.xml}'s), one JavaBean property each.
 *
 * <table>
 *   <caption>Properties</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>destinationLookup</td><td></td><td>JNDI name of the Queue or Topic to consume</td></tr>
 *   <tr><td>destination</td><td></td><td>Millrace name of the queue or topic (when there is no lookup)</td></tr>
 *   <tr><td>destinationType</td><td>jakarta.jms.Queue</td><td>{@code jakarta.jms.Queue} or
 *       {@code jakarta.jms.Topic}</td></tr>
 *   <tr><td>messageSelector</td><td></td><td>JMS message selector</td></tr>
 *   <tr><td>acknowledgeMode</td><td>Auto-acknowledge</td><td>{@code Auto-acknowledge} or
 *       {@code Dups-ok-acknowledge}, for beans without a container transaction</td></tr>
 *   <tr><td>subscriptionDurability</td><td>NonDurable</td><td>{@code Durable} or {@code NonDurable} (topics)</td></tr>
 *   <tr><td>subscriptionName</td><td></td><td>name of the (durable or shared) subscription; required for
 *       Durable</td></tr>
 *   <tr><td>clientId</td><td></td><td>client id of the connections (an unshared durable subscription)</td></tr>
 *   <tr><td>connectionFactoryLookup</td><td></td><td>JNDI name of a Millrace connection factory (the adapter's
 *       pooled one or the provider's) whose options (all but clientId) the activation's connections start from;
 *       the settings below that are set override them ({@code prefetch} always)</td></tr>
 *   <tr><td>maxSession</td><td>15</td><td>most messages delivered at once (concurrent sessions), at least 1</td></tr>
 *   <tr><td>brokers</td><td>the resource adapter's</td><td>bootstrap brokers {@code host:port[,...]}</td></tr>
 *   <tr><td>maxDeliveries</td><td>10</td><td>deliveries of a queue message before it goes to the dead-letter
 *       queue (1..32767)</td></tr>
 *   <tr><td>redeliveryDelayMs</td><td>0</td><td>wait before a rolled-back message is delivered again</td></tr>
 *   <tr><td>maxRedeliveryDelayMs</td><td>60000</td><td>cap of the doubling redelivery delay</td></tr>
 *   <tr><td>deadLetterQueuePattern</td><td>{destination}.DLQ</td><td>name of the dead-letter queue</td></tr>
 *   <tr><td>prefetch</td><td>10</td><td>messages each session fetches ahead</td></tr>
 *   <tr><td>receiveTimeoutMs</td><td>1000</td><td>how long one delivery attempt waits for a message (the
 *       container transaction of a transacted bean spans it); also the longest wait of a deactivation</td></tr>
 * </table>
 *
 * <p>The constraints are Bean Validation annotations (the container validates with its own validator and fails
 * the deployment naming the property) and are checked again by {@link #validate()}, which collects every problem
 * into one {@link InvalidPropertyException} listing the invalid properties; it also compiles the message selector
 * (the broker's grammar), and the resource adapter calls it at every activation.
 *
 * <p>Configured by the container before activation, then read-only.
 */
public class MillraceActivationSpec implements ActivationSpec {

    public static final String QUEUE = "jakarta.jms.Queue";
    public static final String TOPIC = "jakarta.jms.Topic";

    private ResourceAdapter resourceAdapter;
    private String destinationLookup;
    private String destination;
    @Pattern(regexp = "jakarta\\.jms\\.Queue|jakarta\\.jms\\.Topic",
            message = "destinationType must be jakarta.jms.Queue or jakarta.jms.Topic")
    private String destinationType = QUEUE;
    private String messageSelector;
    @Pattern(regexp = "(?i)auto-acknowledge|dups-ok-acknowledge",
            message = "acknowledgeMode must be Auto-acknowledge or Dups-ok-acknowledge")
    private String acknowledgeMode = "Auto-acknowledge";
    @Pattern(regexp = "(?i)durable|nondurable", message = "subscriptionDurability must be Durable or NonDurable")
    private String subscriptionDurability = "NonDurable";
    private String subscriptionName;
    private String clientId;
    private String connectionFactoryLookup;
    @Min(value = 1, message = "maxSession must be at least 1")
    private Integer maxSession = 15;
    private String brokers;
    @Min(value = 1, message = "maxDeliveries must be at least 1")
    @Max(value = 32767, message = "maxDeliveries must be at most 32767")
    private Integer maxDeliveries;
    @Min(value = 0, message = "redeliveryDelayMs must be at least 0")
    private Long redeliveryDelayMs;
    @Min(value = 0, message = "maxRedeliveryDelayMs must be at least 0")
    private Long maxRedeliveryDelayMs;
    private String deadLetterQueuePattern;
    @Min(value = 1, message = "prefetch must be at least 1")
    private Integer prefetch = 10;
    @Min(value = 10, message = "receiveTimeoutMs must be at least 10")
    private Integer receiveTimeoutMs = 1000;

    /** Exactly one of destination and destinationLookup. */
    @AssertTrue(message = "destination or destinationLookup must be set (one of them)")
    public boolean isDestinationGiven() {
        return isBlank(destination) != isBlank(destinationLookup);
    }

    /** A durable subscription needs its name. */
    @AssertTrue(message = "subscriptionName must be set for subscriptionDurability=Durable")
    public boolean isSubscriptionNamedWhenDurable() {
        return !isDurable() || !isBlank(subscriptionName);
    }

    /**
     * Checks the properties: the same rules as the Bean Validation constraints.
     *
     * @throws InvalidPropertyException listing every invalid property, its message naming each problem
     */
    @Override
    public void validate() throws InvalidPropertyException {
        List<String> problems = new ArrayList<>();
        List<String> invalid = new ArrayList<>();
        check(problems, invalid, "destinationType", QUEUE.equals(destinationType) || TOPIC.equals(destinationType),
                "destinationType must be jakarta.jms.Queue or jakarta.jms.Topic, not '" + destinationType + "'");
        check(problems, invalid, "acknowledgeMode", acknowledgeMode != null
                && acknowledgeMode.matches("(?i)auto-acknowledge|dups-ok-acknowledge"),
                "acknowledgeMode must be Auto-acknowledge or Dups-ok-acknowledge, not '" + acknowledgeMode + "'");
        check(problems, invalid, "subscriptionDurability", subscriptionDurability != null
                && subscriptionDurability.matches("(?i)durable|nondurable"),
                "subscriptionDurability must be Durable or NonDurable, not '" + subscriptionDurability + "'");
        check(problems, invalid, "maxSession", maxSession != null && maxSession >= 1,
                "maxSession must be at least 1, not " + maxSession);
        check(problems, invalid, "destination", isDestinationGiven(),
                "destination or destinationLookup must be set (one of them)");
        check(problems, invalid, "subscriptionName", isSubscriptionNamedWhenDurable(),
                "subscriptionName must be set for subscriptionDurability=Durable");
        check(problems, invalid, "maxDeliveries", maxDeliveries == null || maxDeliveries >= 1 && maxDeliveries <= 32767,
                "maxDeliveries must be 1..32767, not " + maxDeliveries);
        check(problems, invalid, "redeliveryDelayMs", redeliveryDelayMs == null || redeliveryDelayMs >= 0,
                "redeliveryDelayMs must be at least 0, not " + redeliveryDelayMs);
        check(problems, invalid, "prefetch", prefetch != null && prefetch >= 1, "prefetch must be at least 1, not "
                + prefetch);
        check(problems, invalid, "receiveTimeoutMs", receiveTimeoutMs != null && receiveTimeoutMs >= 10,
                "receiveTimeoutMs must be at least 10, not " + receiveTimeoutMs);
        String selectorProblem = selectorProblem(messageSelector);
        check(problems, invalid, "messageSelector", selectorProblem == null, "messageSelector '" + messageSelector
                + "' is not a JMS selector: " + selectorProblem);
        if (problems.isEmpty()) {
            try {
                connectionFactory(null);
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            InvalidPropertyException e = new InvalidPropertyException("invalid activation of " + this + ": "
                    + String.join("; ", problems));
            e.setInvalidPropertyDescriptors(descriptors(invalid));
            throw e;
        }
    }

    /** Why {@code selector} does not compile, or null if it does (or is blank: no selector). */
    private static String selectorProblem(String selector) {
        if (isBlank(selector)) {
            return null;
        }
        try {
            Selector.compile(selector);
            return null;
        } catch (SelectorSyntaxException e) {
            return e.getMessage() + " [position " + e.position() + ", token " + e.token() + "]";
        }
    }

    private static void check(List<String> problems, List<String> invalid, String property, boolean ok,
            String problem) {
        if (!ok) {
            problems.add(problem);
            invalid.add(property);
        }
    }

    private static PropertyDescriptor[] descriptors(List<String> names) {
        List<PropertyDescriptor> descriptors = new ArrayList<>();
        for (String name : names) {
            try {
                descriptors.add(new PropertyDescriptor(name, MillraceActivationSpec.class));
            } catch (IntrospectionException e) {
                // a rule without a read-write property of that name: the message names it all the same
            }
        }
        return descriptors.toArray(new PropertyDescriptor[0]);
    }

    /**
     * A provider factory with this activation's connection settings ({@code defaultBrokers} when {@code brokers} is
     * not set; a null default keeps the provider's), without a {@code connectionFactoryLookup}'s.
     *
     * @throws IllegalArgumentException naming the setting that does not fit
     */
    MillraceConnectionFactory connectionFactory(String defaultBrokers) {
        return connectionFactory(defaultBrokers, null);
    }

    /**
     * A provider factory with the options {@code base} (those of the factory {@code connectionFactoryLookup} names,
     * or null; but not its {@code clientId}: that of the activation's connections is this activation's) overridden
     * by this activation's connection settings that are set, {@code prefetch} always; the brokers are this
     * activation's, else {@code base}'s, else {@code defaultBrokers} (a null default keeps the provider's).
     *
     * @throws IllegalArgumentException naming the setting that does not fit
     */
    MillraceConnectionFactory connectionFactory(String defaultBrokers, Map<String, String> base) {
        MillraceConnectionFactory factory = new MillraceConnectionFactory();
        if (base != null) {
            Map<String, String> options = new HashMap<>(base);
            options.remove("clientId");
            factory.setProperties(options);
        }
        String b = !isBlank(brokers) ? brokers : base != null && base.containsKey("brokers") ? null : defaultBrokers;
        if (b != null) {
            factory.setBrokers(b);
        }
        if (!isBlank(clientId)) {
            factory.setClientId(clientId);
        }
        if (maxDeliveries != null) {
            factory.setMaxDeliveries(maxDeliveries);
        }
        if (redeliveryDelayMs != null) {
            factory.setRedeliveryDelayMs(redeliveryDelayMs);
        }
        if (maxRedeliveryDelayMs != null) {
            factory.setMaxRedeliveryDelayMs(maxRedeliveryDelayMs);
        }
        if (deadLetterQueuePattern != null) {
            factory.setDeadLetterQueuePattern(deadLetterQueuePattern);
        }
        factory.setPrefetch(prefetch);
        return factory;
    }

    boolean isTopic() {
        return TOPIC.equals(destinationType);
    }

    boolean isDurable() {
        return "durable".equalsIgnoreCase(subscriptionDurability);
    }

    boolean isDupsOk() {
        return "dups-ok-acknowledge".equalsIgnoreCase(acknowledgeMode);
    }

    static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }

    @Override
    public ResourceAdapter getResourceAdapter() {
        return resourceAdapter;
    }

    @Override
    public void setResourceAdapter(ResourceAdapter resourceAdapter) throws ResourceException {
        this.resourceAdapter = resourceAdapter;
    }

    public String getDestinationLookup() {
        return destinationLookup;
    }

    public void setDestinationLookup(String destinationLookup) {
        this.destinationLookup = destinationLookup;
    }

    public String getDestination() {
        return destination;
    }

    public void setDestination(String destination) {
        this.destination = destination;
    }

    public String getDestinationType() {
        return destinationType;
    }

    public void setDestinationType(String destinationType) {
        this.destinationType = destinationType;
    }

    public String getMessageSelector() {
        return messageSelector;
    }

    public void setMessageSelector(String messageSelector) {
        this.messageSelector = messageSelector;
    }

    public String getAcknowledgeMode() {
        return acknowledgeMode;
    }

    public void setAcknowledgeMode(String acknowledgeMode) {
        this.acknowledgeMode = acknowledgeMode;
    }

    public String getSubscriptionDurability() {
        return subscriptionDurability;
    }

    public void setSubscriptionDurability(String subscriptionDurability) {
        this.subscriptionDurability = subscriptionDurability;
    }

    public String getSubscriptionName() {
        return subscriptionName;
    }

    public void setSubscriptionName(String subscriptionName) {
        this.subscriptionName = subscriptionName;
    }

    public String getClientId() {
        return clientId;
    }

    public void setClientId(String clientId) {
        this.clientId = clientId;
    }

    public String getConnectionFactoryLookup() {
        return connectionFactoryLookup;
    }

    public void setConnectionFactoryLookup(String connectionFactoryLookup) {
        this.connectionFactoryLookup = connectionFactoryLookup;
    }

    public Integer getMaxSession() {
        return maxSession;
    }

    public void setMaxSession(Integer maxSession) {
        this.maxSession = maxSession;
    }

    public String getBrokers() {
        return brokers;
    }

    public void setBrokers(String brokers) {
        this.brokers = brokers;
    }

    public Integer getMaxDeliveries() {
        return maxDeliveries;
    }

    public void setMaxDeliveries(Integer maxDeliveries) {
        this.maxDeliveries = maxDeliveries;
    }

    public Long getRedeliveryDelayMs() {
        return redeliveryDelayMs;
    }

    public void setRedeliveryDelayMs(Long redeliveryDelayMs) {
        this.redeliveryDelayMs = redeliveryDelayMs;
    }

    public Long getMaxRedeliveryDelayMs() {
        return maxRedeliveryDelayMs;
    }

    public void setMaxRedeliveryDelayMs(Long maxRedeliveryDelayMs) {
        this.maxRedeliveryDelayMs = maxRedeliveryDelayMs;
    }

    public String getDeadLetterQueuePattern() {
        return deadLetterQueuePattern;
    }

    public void setDeadLetterQueuePattern(String deadLetterQueuePattern) {
        this.deadLetterQueuePattern = deadLetterQueuePattern;
    }

    public Integer getPrefetch() {
        return prefetch;
    }

    public void setPrefetch(Integer prefetch) {
        this.prefetch = prefetch;
    }

    public Integer getReceiveTimeoutMs() {
        return receiveTimeoutMs;
    }

    public void setReceiveTimeoutMs(Integer receiveTimeoutMs) {
        this.receiveTimeoutMs = receiveTimeoutMs;
    }

    @Override
    public String toString() {
        return "MillraceActivationSpec[" + destinationType + " " + (isBlank(destination) ? destinationLookup
                : destination) + ", maxSession=" + maxSession + "]";
    }
}
