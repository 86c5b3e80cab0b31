package dev.millrace.broker.network;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.protocol.ApiKeys;

import dev.millrace.protocol.ext.ExtensionApi;

/**
 * The API keys and version ranges this broker serves, as advertised in ApiVersions. A version is
 * listed only when every field it carries is handled; for example Produce and Fetch stop at the last
 * versions that name topics (12), since later ones identify topics by id only.
 *
 * <p>Immutable; thread-safe.
 */
public final class ApiVersionTable {

    private final Map<ApiKeys, short[]> ranges;
    private final Set<ExtensionApi> extensions;

    private ApiVersionTable(Map<ApiKeys, short[]> ranges, Set<ExtensionApi> extensions) {
        this.ranges = ranges;
        this.extensions = extensions;
    }

    /** Builder-style declaration of one API. */
    public static final class Builder {
        private final Map<ApiKeys, short[]> ranges = new EnumMap<>(ApiKeys.class);
        private final Set<ExtensionApi> extensions = EnumSet.noneOf(ExtensionApi.class);

        /** Serves a Millrace extension API in the versions its codec speaks. */
        public Builder addExtension(ExtensionApi api) {
            extensions.add(api);
            return this;
        }

        public Builder add(ApiKeys key, int minVersion, int maxVersion) {
            short min = (short) Math.max(minVersion, key.oldestVersion());
            short max = (short) Math.min(maxVersion, key.latestVersion(true));
            if (min > max) {
                throw new IllegalArgumentException(key + " versions " + minVersion + ".." + maxVersion
                        + " do not overlap the client library's " + key.oldestVersion() + ".." + key.latestVersion(true));
            }
            ranges.put(key, new short[] {min, max});
            return this;
        }

        /** Serves every version that kafka-clients can parse. */
        public Builder addAll(ApiKeys key) {
            return add(key, key.oldestVersion(), key.latestVersion(true));
        }

        public ApiVersionTable build() {
            return new ApiVersionTable(new EnumMap<>(ranges), extensions.isEmpty()
                    ? EnumSet.noneOf(ExtensionApi.class) : EnumSet.copyOf(extensions));
        }
    }

    public boolean supports(ApiKeys key, short version) {
        short[] range = ranges.get(key);
        return range != null && version >= range[0] && version <= range[1];
    }

    public boolean supports(ApiKeys key) {
        return ranges.containsKey(key);
    }

    /** Whether extension API {@code api} is served in {@code version}. */
    public boolean supports(ExtensionApi api, short version) {
        return extensions.contains(api) && version >= api.minVersion() && version <= api.maxVersion();
    }

    String describe(ApiKeys key) {
        short[] range = ranges.get(key);
        return range == null ? "no version" : "versions " + range[0] + ".." + range[1];
    }

    /**
     * The ApiVersions response body listing every served API, the Millrace extensions included (kafka-clients
     * keeps keys it does not know aside, so Kafka clients are unaffected).
     */
    public ApiVersionsResponseData toResponseData() {
        ApiVersionCollection keys = new ApiVersionCollection();
        ranges.forEach((key, range) -> keys.add(new ApiVersion().setApiKey(key.id).setMinVersion(range[0])
                .setMaxVersion(range[1])));
        extensions.forEach(api -> keys.add(new ApiVersion().setApiKey(api.key()).setMinVersion(api.minVersion())
                .setMaxVersion(api.maxVersion())));
        return new ApiVersionsResponseData().setApiKeys(keys);
    }
}
