package dev.millrace.broker.group;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocol;

/**
 * What a JoinGroup asks for, normalized: the rebalance timeout defaults to the session timeout
 * (version 0 has none), protocols keep the member's order of preference.
 */
record JoinParams(int sessionTimeoutMs, int rebalanceTimeoutMs, String protocolType,
                  List<GroupMember.Protocol> protocols) {

    static JoinParams from(JoinGroupRequestData request) {
        List<GroupMember.Protocol> protocols = new ArrayList<>(request.protocols().size());
        for (JoinGroupRequestProtocol protocol : request.protocols()) {
            protocols.add(new GroupMember.Protocol(protocol.name(),
                    protocol.metadata() == null ? new byte[0] : protocol.metadata()));
        }
        int rebalanceTimeoutMs = request.rebalanceTimeoutMs() < 0 ? request.sessionTimeoutMs()
                : request.rebalanceTimeoutMs();
        return new JoinParams(request.sessionTimeoutMs(), rebalanceTimeoutMs, request.protocolType(), protocols);
    }

    List<String> protocolNames() {
        List<String> names = new ArrayList<>(protocols.size());
        protocols.forEach(p -> names.add(p.name()));
        return names;
    }
}
