package dev.millrace.jms.message;

import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.jms.Destination;
import jakarta.jms.Message;
import jakarta.jms.MessageEOFException;
import jakarta.jms.Queue;
import jakarta.jms.TemporaryTopic;

/**
 * Another provider's messages and destinations: minimal working implementations of the jakarta.jms interfaces (built
 * with {@link Proxy}, holding real state), so the mapper's copy-through-the-standard-API path runs against classes it
 * cannot see inside.
 */
final class ForeignMessages {

    private ForeignMessages() {
    }

    static Queue queue(String name) {
        return (Queue) Proxy.newProxyInstance(ForeignMessages.class.getClassLoader(), new Class<?>[] {Queue.class},
                (proxy, method, args) -> method.getName().equals("getQueueName") ? name : "foreign-queue:" + name);
    }

    static TemporaryTopic temporaryTopic(String name) {
        return (TemporaryTopic) Proxy.newProxyInstance(ForeignMessages.class.getClassLoader(),
                new Class<?>[] {TemporaryTopic.class},
                (proxy, method, args) -> method.getName().equals("getTopicName") ? name : null);
    }

    static Destination plainDestination() {
        return (Destination) Proxy.newProxyInstance(ForeignMessages.class.getClassLoader(),
                new Class<?>[] {Destination.class}, (proxy, method, args) -> "odd-destination");
    }

    /** A foreign message implementing {@code type} (Message or one of its five subtypes). */
    static <T extends Message> T create(Class<T> type) {
        Map<String, Object> headers = new HashMap<>();
        headers.put("JMSDeliveryMode", jakarta.jms.DeliveryMode.PERSISTENT);
        headers.put("JMSPriority", Message.DEFAULT_PRIORITY);
        Map<String, Object> properties = new LinkedHashMap<>();
        Map<String, Object> map = new LinkedHashMap<>();
        List<Object> stream = new ArrayList<>();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Object[] single = new Object[1];
        int[] position = new int[1];
        Object proxy = Proxy.newProxyInstance(ForeignMessages.class.getClassLoader(), new Class<?>[] {type},
                (self, method, args) -> {
                    String name = method.getName();
                    Class<?> returns = method.getReturnType();
                    if (name.startsWith("setJMS")) {
                        headers.put(name.substring(3), args[0]);
                        return null;
                    }
                    if (name.startsWith("getJMS")) {
                        Object v = headers.get(name.substring(3));
                        if (v != null || !returns.isPrimitive()) {
                            return v;
                        }
                        return returns == boolean.class ? Boolean.FALSE : returns == int.class ? (Object) 0 : 0L;
                    }
                    switch (name) {
                        case "getPropertyNames":
                            return Collections.enumeration(new ArrayList<>(properties.keySet()));
                        case "getObjectProperty":
                            return properties.get((String) args[0]);
                        case "setText":
                        case "setObject":
                            if (args.length == 1) {
                                single[0] = args[0];
                            } else {
                                map.put((String) args[0], args[1]);
                            }
                            return null;
                        case "getText":
                            return single[0];
                        case "getObject":
                            return args == null ? single[0] : map.get((String) args[0]);
                        case "getMapNames":
                            return Collections.enumeration(new ArrayList<>(map.keySet()));
                        case "writeBytes":
                            bytes.write((byte[]) args[0], 0, ((byte[]) args[0]).length);
                            return null;
                        case "getBodyLength":
                            return (long) bytes.size();
                        case "readBytes": {
                            byte[] all = bytes.toByteArray();
                            byte[] into = (byte[]) args[0];
                            int n = Math.min(into.length, all.length - position[0]);
                            if (n <= 0) {
                                return -1;
                            }
                            System.arraycopy(all, position[0], into, 0, n);
                            position[0] += n;
                            return n;
                        }
                        case "writeObject":
                            stream.add(args[0]);
                            return null;
                        case "readObject":
                            if (position[0] >= stream.size()) {
                                throw new MessageEOFException("end");
                            }
                            return stream.get(position[0]++);
                        case "reset":
                            position[0] = 0;
                            return null;
                        case "toString":
                            return "foreign " + type.getSimpleName();
                        case "hashCode":
                            return System.identityHashCode(self);
                        case "equals":
                            return self == args[0];
                        default:
                            if (name.startsWith("set") && name.endsWith("Property")) {
                                properties.put((String) args[0], args[1]);
                                return null;
                            }
                            throw new UnsupportedOperationException(name);
                    }
                });
        return type.cast(proxy);
    }
}
