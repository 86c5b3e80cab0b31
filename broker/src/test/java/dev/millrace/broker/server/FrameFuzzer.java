package dev.millrace.broker.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;

import dev.millrace.broker.network.ApiVersionTable;
import dev.millrace.protocol.ext.ExtensionApi;
import dev.millrace.protocol.ext.ExtensionHeader;
import dev.millrace.protocol.ext.ShareBrowse;
import dev.millrace.protocol.ext.ShareMember;
import dev.millrace.protocol.ext.TxnAddSharePartition;
import dev.millrace.protocol.ext.XaComplete;
import dev.millrace.protocol.ext.XaRecover;
import dev.millrace.protocol.ext.XaXid;

/**
 * Generates the frames of one fuzzed connection from a seed, so that a failing connection replays from
 * {@code (run seed, connection index)}. A connection is a {@link Plan}: frames with correct size prefixes (requests
 * built with kafka-clients' message classes and random field values, the same byte-mutated, random bytes, unknown API
 * keys and unserved versions), then either an ApiVersions sentinel whose response (or the broker's close) ends the
 * connection, or a terminal frame whose size prefix lies (negative, oversized, shorter or longer than its bytes) after
 * which the client closes.
 *
 * <p>Requests never name the well-behaved client's topic and never use an API that changes the cluster (topic,
 * config, ACL, controller APIs), nor one that may rightly wait long (Fetch is sent unmutated with no wait): the
 * sentinel's response must come promptly unless the broker is stuck.
 *
 * <p>ShareBrowse requests name one of eight groups only. Known and left open: a ShareBrowse (like a first ShareFetch)
 * of a group creates that group's share-partition, which stays until the group is deleted or leadership moves, about
 * 70 KiB each (mostly its {@code BatchCursor}'s 64 KiB buffer); so a client browsing ever new group names grows the
 * broker's heap without bound (this fuzzer, with random names, grew it by 78 MiB in 100,000 frames).
 *
 * <p>Not thread-safe: one instance per connection.
 */
final class FrameFuzzer {

    /** Kinds of frames, counted by the test. */
    enum Kind { VALID, MUTATED, RANDOM, BAD_HEADER, NEGATIVE_SIZE, OVERSIZED, SHORT_SIZE, LONG_SIZE }

    /** One connection's frames (each with its size prefix) and how it ends. */
    record Plan(List<byte[]> frames, List<Kind> kinds, boolean terminal, int sentinelCorrelationId) {
    }

    static final String TOPIC = "fuzz";

    /** Known keys a random frame may carry: the read-only and produce APIs; anything else becomes unknown. */
    private static final Set<Short> SAFE_KEYS = Set.of(ApiKeys.PRODUCE.id, ApiKeys.FETCH.id, ApiKeys.LIST_OFFSETS.id,
            ApiKeys.METADATA.id, ApiKeys.OFFSET_FETCH.id, ApiKeys.FIND_COORDINATOR.id, ApiKeys.DESCRIBE_GROUPS.id,
            ApiKeys.LIST_GROUPS.id, ApiKeys.API_VERSIONS.id, ApiKeys.DESCRIBE_CONFIGS.id,
            ApiKeys.OFFSET_FOR_LEADER_EPOCH.id, ApiKeys.DESCRIBE_PRODUCERS.id, ApiKeys.LIST_TRANSACTIONS.id,
            ApiKeys.DESCRIBE_TRANSACTIONS.id, ApiKeys.SHARE_GROUP_DESCRIBE.id, ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS.id);

    private final SplittableRandom random;
    private final ApiVersionTable versions;
    private final int maxRequestBytes;
    private int correlationId;

    FrameFuzzer(long runSeed, long connection, ApiVersionTable versions, int maxRequestBytes) {
        this.random = new SplittableRandom(runSeed ^ (connection * 0x9E3779B97F4A7C15L));
        this.versions = versions;
        this.maxRequestBytes = maxRequestBytes;
        this.correlationId = random.nextInt(1 << 20);
    }

    Plan plan() {
        List<byte[]> frames = new ArrayList<>();
        List<Kind> kinds = new ArrayList<>();
        // well-formed requests first, then the risky frames: each one after a risky frame that closed the
        // connection is sent but never read, so they come last to keep most of them read
        for (int i = random.nextInt(33); i > 0; i--) {
            kinds.add(Kind.VALID);
            frames.add(frame(validRequest(true)));
        }
        for (int i = 1 + random.nextInt(8); i > 0; i--) {
            int roll = random.nextInt(100);
            Kind kind = roll < 65 ? Kind.MUTATED : roll < 85 ? Kind.RANDOM : Kind.BAD_HEADER;
            kinds.add(kind);
            frames.add(frame(switch (kind) {
                case MUTATED -> mutate(validRequest(false));
                case RANDOM -> randomFrame();
                default -> badHeader();
            }));
        }
        if (random.nextInt(100) < 12) {
            Kind kind = switch (random.nextInt(4)) {
                case 0 -> Kind.NEGATIVE_SIZE;
                case 1 -> Kind.OVERSIZED;
                case 2 -> Kind.SHORT_SIZE;
                default -> Kind.LONG_SIZE;
            };
            kinds.add(kind);
            frames.add(lyingFrame(kind));
            return new Plan(frames, kinds, true, 0);
        }
        int sentinel = 0x5EED0000 | random.nextInt(1 << 16);
        frames.add(frame(RawConnection.serialize(new ApiVersionsRequestData(), (short) 0, sentinel)));
        return new Plan(frames, kinds, false, sentinel);
    }

    private static byte[] frame(ByteBuffer body) {
        return RawConnection.frame(body);
    }

    /** A request built with kafka-clients' message classes, random contents, a served version. */
    private ByteBuffer validRequest(boolean mayFetch) {
        if (random.nextInt(8) == 0) {
            return extensionRequest();
        }
        for (int attempt = 0; attempt < 8; attempt++) {
            ApiMessage data = switch (random.nextInt(mayFetch ? 10 : 9)) {
                case 0 -> new ApiVersionsRequestData().setClientSoftwareName(name()).setClientSoftwareVersion("1.0");
                case 1 -> metadata();
                case 2 -> produce();
                case 3 -> listOffsets();
                case 4 -> new FindCoordinatorRequestData().setKey(name()).setKeyType((byte) random.nextInt(3))
                        .setCoordinatorKeys(List.of(name()));
                case 5 -> new OffsetFetchRequestData().setGroupId(name()).setGroups(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(name())));
                case 6 -> new DescribeGroupsRequestData().setGroups(List.of(name(), name()));
                case 7 -> new ListGroupsRequestData();
                case 8 -> new DescribeConfigsRequestData().setResources(List.of(
                        new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
                                .setResourceName(TOPIC),
                        new DescribeConfigsRequestData.DescribeConfigsResource()
                                .setResourceType((byte) (random.nextBoolean() ? 4 : random.nextInt(8)))
                                .setResourceName(random.nextBoolean() ? "1" : name())));
                default -> fetch();
            };
            ApiKeys key = ApiKeys.forId(data.apiKey());
            short version = servedVersion(key);
            try {
                return RawConnection.serialize(data, version, ++correlationId);
            } catch (RuntimeException notInThisVersion) {
                // a field set above that this version lacks: try another request
            }
        }
        return RawConnection.serialize(new ApiVersionsRequestData(), (short) 0, ++correlationId);
    }

    /**
     * A Millrace extension request built with its codec in {@code protocol/}: the read-only ones and those that
     * only act on random (unknown) ids, answered with an error.
     */
    private ByteBuffer extensionRequest() {
        Struct body;
        ExtensionApi api;
        switch (random.nextInt(5)) {
            case 0 -> {
                api = ExtensionApi.SHARE_BROWSE;
                // a browse creates the group's share-partition, kept until the group is deleted or leadership
                // moves: random group names would grow the heap without bound (see the class comment)
                body = new ShareBrowse.Request("browse-" + random.nextInt(8), TOPIC, random.nextInt(4) - 1, random.nextInt(3) == 0
                        ? random.nextLong() : random.nextInt(50), random.nextInt(1 << 20)).toStruct();
            }
            case 1 -> {
                api = ExtensionApi.SHARE_MEMBER;
                body = new ShareMember.Request(name(), name()).toStruct();
            }
            case 2 -> {
                api = ExtensionApi.XA_RECOVER;
                body = new XaRecover.Request(name()).toStruct();
            }
            case 3 -> {
                api = ExtensionApi.XA_COMPLETE;
                byte[] gtrid = new byte[1 + random.nextInt(64)];
                random.nextBytes(gtrid);
                body = new XaComplete.Request("fuzz-" + name(), new XaXid(random.nextInt() & 0x7fffffff, gtrid, new byte[0]),
                        XaComplete.Action.values()[random.nextInt(XaComplete.Action.values().length)],
                        random.nextBoolean()).toStruct();
            }
            default -> {
                api = ExtensionApi.TXN_ADD_SHARE_PARTITION;
                body = new TxnAddSharePartition.Request("fuzz-" + name(), TOPIC, random.nextInt(4) - 1).toStruct();
            }
        }
        ByteBuffer frame = new ExtensionHeader(api.key(), api.minVersion(), ++correlationId, "fuzz").frame(body);
        return frame.position(4).slice(); // without its size prefix, as the other requests
    }

    private short servedVersion(ApiKeys key) {
        List<Short> served = new ArrayList<>();
        for (short v = key.oldestVersion(); v <= key.latestVersion(true); v++) {
            if (versions.supports(key, v)) {
                served.add(v);
            }
        }
        return served.get(random.nextInt(served.size()));
    }

    private MetadataRequestData metadata() {
        MetadataRequestData data = new MetadataRequestData().setAllowAutoTopicCreation(random.nextBoolean());
        if (random.nextInt(4) == 0) {
            return data.setTopics(null);
        }
        List<MetadataRequestData.MetadataRequestTopic> topics = new ArrayList<>();
        for (int i = random.nextInt(4); i >= 0; i--) {
            topics.add(new MetadataRequestData.MetadataRequestTopic().setName(random.nextBoolean() ? TOPIC : name()));
        }
        return data.setTopics(topics);
    }

    private ProduceRequestData produce() {
        short acks = (short) (random.nextInt(3) - 1);
        byte[] value = new byte[random.nextInt(2048)];
        random.nextBytes(value);
        MemoryRecords records = MemoryRecords.withRecords(random.nextInt(4) == 0 ? Compression.gzip().build()
                : Compression.NONE, new SimpleRecord(System.currentTimeMillis(), name().getBytes(StandardCharsets.UTF_8),
                value), new SimpleRecord(value));
        ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(random.nextInt(5000));
        data.topicData().add(new ProduceRequestData.TopicProduceData().setName(random.nextInt(5) == 0 ? name() : TOPIC)
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(random.nextInt(4) - 1).setRecords(records))));
        return data;
    }

    private ListOffsetsRequestData listOffsets() {
        long[] timestamps = {-1, -2, -3, -4, -5, random.nextLong(), System.currentTimeMillis()};
        return new ListOffsetsRequestData().setReplicaId(-1).setIsolationLevel((byte) random.nextInt(2))
                .setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC).setPartitions(List.of(
                        new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(random.nextInt(4) - 1)
                                .setTimestamp(timestamps[random.nextInt(timestamps.length)])))));
    }

    /** A Fetch that never waits: sent as built, since a mutated wait or min bytes may rightly hold it. */
    private FetchRequestData fetch() {
        return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0)
                .setMaxBytes(random.nextInt(1 << 20)).setTopics(List.of(new FetchRequestData.FetchTopic()
                        .setTopic(random.nextInt(5) == 0 ? name() : TOPIC).setPartitions(List.of(
                                new FetchRequestData.FetchPartition().setPartition(random.nextInt(4) - 1)
                                        .setFetchOffset(random.nextInt(3) == 0 ? random.nextLong() : random.nextInt(50))
                                        .setPartitionMaxBytes(random.nextInt(1 << 20))))));
    }

    private String name() {
        int length = random.nextInt(12);
        StringBuilder out = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            out.append((char) (random.nextInt(8) == 0 ? random.nextInt(0x20, 0x3000) : random.nextInt('a', 'z' + 1)));
        }
        return out.toString();
    }

    /**
     * Byte-level mutations of a request, past its API key and version (those are {@link Kind#BAD_HEADER}'s): set,
     * flip, insert, delete, cut the end, or extend it with random bytes.
     */
    private ByteBuffer mutate(ByteBuffer request) {
        byte[] bytes = new byte[request.remaining()];
        request.get(bytes);
        List<Byte> out = new ArrayList<>(bytes.length + 16);
        for (byte b : bytes) {
            out.add(b);
        }
        for (int m = 1 + random.nextInt(4); m > 0 && out.size() > 4; m--) {
            int at = 4 + random.nextInt(out.size() - 4);
            switch (random.nextInt(7)) {
                case 0 -> out.set(at, (byte) random.nextInt(256));
                case 1 -> out.set(at, (byte) (out.get(at) ^ (1 << random.nextInt(8))));
                case 2 -> out.set(at, (byte) (random.nextBoolean() ? 0xFF : 0x7F));
                case 3 -> out.add(at, (byte) random.nextInt(256));
                case 4 -> out.remove(at);
                case 5 -> out.subList(at, out.size()).clear();
                default -> {
                    for (int i = random.nextInt(64); i > 0; i--) {
                        out.add((byte) random.nextInt(256));
                    }
                }
            }
        }
        byte[] mutated = new byte[out.size()];
        for (int i = 0; i < mutated.length; i++) {
            mutated[i] = out.get(i);
        }
        return ByteBuffer.wrap(mutated);
    }

    /** Random bytes; the first two often a served, an unknown or an extension API key. */
    private ByteBuffer randomFrame() {
        byte[] bytes = new byte[random.nextInt(random.nextBoolean() ? 16 : 1024)];
        random.nextBytes(bytes);
        if (bytes.length >= 4) {
            short key = switch (random.nextInt(4)) {
                case 0 -> SAFE_KEYS.stream().skip(random.nextInt(SAFE_KEYS.size())).findFirst().orElseThrow();
                case 1 -> (short) (ExtensionApi.FIRST_KEY + random.nextInt(24));
                default -> (short) random.nextInt(Short.MIN_VALUE, Short.MAX_VALUE + 1);
            };
            if (ApiKeys.hasId(key) && !SAFE_KEYS.contains(key)) {
                key = 9999; // never an API that changes the cluster
            }
            ByteBuffer.wrap(bytes).putShort(key);
            if (random.nextBoolean() && ApiKeys.hasId(key)) {
                ByteBuffer.wrap(bytes).putShort(2, servedVersion(ApiKeys.forId(key)));
            }
        }
        return ByteBuffer.wrap(bytes);
    }

    /** A well-formed request whose API key is unknown or whose version is not served. */
    private ByteBuffer badHeader() {
        ByteBuffer request = validRequest(false);
        if (random.nextBoolean()) {
            request.putShort(0, (short) (random.nextBoolean() ? 9999 : ExtensionApi.LAST_KEY));
        } else {
            request.putShort(2, (short) (random.nextBoolean() ? 999 : -1));
        }
        return request;
    }

    /** A frame whose size prefix lies; the client closes after it. */
    private byte[] lyingFrame(Kind kind) {
        ByteBuffer body = validRequest(false);
        int actual = body.remaining();
        int claimed = switch (kind) {
            case NEGATIVE_SIZE -> random.nextBoolean() ? -1 : Integer.MIN_VALUE + random.nextInt(1000);
            case OVERSIZED -> maxRequestBytes + 1 + random.nextInt(Integer.MAX_VALUE - maxRequestBytes - 1);
            case SHORT_SIZE -> random.nextInt(Math.max(1, actual));
            default -> actual + 1 + random.nextInt(1000);
        };
        ByteBuffer out = ByteBuffer.allocate(4 + actual);
        out.putInt(claimed).put(body);
        return out.array();
    }
}
