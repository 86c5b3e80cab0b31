package dev.millrace.broker.controller;

import com.alipay.sofa.jraft.option.RpcOptions;
import com.alipay.sofa.jraft.rpc.RpcClient;
import com.alipay.sofa.jraft.rpc.impl.BoltRaftRpcFactory;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcClient;
import com.alipay.sofa.jraft.util.SPI;

/**
 * SOFAJRaft's Bolt RPC factory, plus TLS for the RPC clients of nodes whose options carry {@link QuorumTls}:
 * SOFAJRaft creates its clients itself (replicators, votes, the CLI service) and only lets the factory configure
 * them, from the options the node or CLI service was started with. Registered in
 * {@code META-INF/services/com.alipay.sofa.jraft.rpc.RaftRpcFactory} with a priority above the stock factory's, so
 * SOFAJRaft picks it; options without TLS (every node of a PLAINTEXT quorum) get the stock behaviour.
 */
@SPI(name = "millrace-bolt", priority = 1)
public final class QuorumRpcFactory extends BoltRaftRpcFactory {

    @Override
    public ConfigHelper<RpcClient> defaultJRaftClientConfigHelper(RpcOptions options) {
        ConfigHelper<RpcClient> stock = super.defaultJRaftClientConfigHelper(options);
        QuorumTls tls = options instanceof QuorumTls.Carrier carrier ? carrier.quorumTls() : null;
        if (tls == null) {
            return stock;
        }
        return client -> {
            if (stock != null) {
                stock.config(client);
            }
            tls.configureClient(((BoltRpcClient) client).getRpcClient());
        };
    }
}
