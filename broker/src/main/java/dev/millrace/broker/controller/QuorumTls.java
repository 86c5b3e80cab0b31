package dev.millrace.broker.controller;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Collections;
import java.util.Locale;
import java.util.Objects;

import com.alipay.remoting.config.BoltClientOption;
import com.alipay.remoting.config.BoltServerOption;

/**
 * Mutual TLS between the nodes of the metadata quorum ({@code controller.quorum.security.protocol=SSL}), on
 * SOFAJRaft's RPC transport (SOFABolt over Netty's {@code SslHandler}, JDK engine).
 *
 * <pre>
 *   node A (client side of its RPC)                 node B (quorum port)
 *   presents: the key entry of the store  ------&gt;   requires a client certificate it trusts
 *   trusts:   the certificates in the store &lt;------  presents: the key entry of its store
 * </pre>
 *
 * SOFABolt takes one store per side for both roles: the key manager and the trust manager are made from the same
 * {@code KeyStore}, so a node trusts what its store holds (its own certificate and every certificate entry).
 * Nodes whose certificates one authority signed therefore need that authority's certificate imported into each
 * node's store ({@code keytool -importcert -alias ca}); nodes sharing one key and certificate need nothing more.
 * Host names are not checked (SOFABolt's client engine gets no peer host): a peer is whoever holds a trusted
 * certificate, which is what lets it in. PEM stores are not supported here (SOFABolt loads a {@code KeyStore}).
 *
 * <p>The server side is set on the RPC server {@link MetadataQuorum} creates; the client side reaches SOFAJRaft's
 * own RPC clients (replicators, elections, the CLI service a learner joins with) through
 * {@link QuorumRpcFactory}, which finds this object on the options those clients are created from
 * ({@link Carrier}).
 *
 * @param keystore the store's file
 * @param password the store's password (also its key's)
 * @param type     PKCS12 or JKS
 */
public record QuorumTls(Path keystore, String password, String type) {

    /** Options (SOFAJRaft's {@code NodeOptions}, {@code CliOptions}) that carry the quorum's TLS settings. */
    public interface Carrier {
        QuorumTls quorumTls();
    }

    public QuorumTls {
        Objects.requireNonNull(keystore, "keystore");
        Objects.requireNonNull(password, "password");
        type = Objects.requireNonNull(type, "type").toUpperCase(Locale.ROOT);
    }

    /**
     * Loads the store once, so that a wrong file, password or type stops the node at start with a message naming
     * the setting instead of failing every quorum connection later.
     *
     * @throws IllegalArgumentException naming {@code ssl.keystore.location} and what is wrong
     */
    public QuorumTls check() {
        KeyStore store;
        try (InputStream in = Files.newInputStream(keystore)) {
            store = KeyStore.getInstance(type);
            store.load(in, password.toCharArray());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("ssl.keystore.location: cannot load " + keystore + " as a " + type
                    + " store with ssl.keystore.password for the metadata quorum's TLS "
                    + "(controller.quorum.security.protocol=SSL): " + e.getMessage(), e);
        }
        try {
            boolean hasKey = false;
            for (String alias : Collections.list(store.aliases())) {
                hasKey |= store.isKeyEntry(alias);
            }
            if (!hasKey) {
                throw new IllegalArgumentException("ssl.keystore.location: " + keystore + " holds no private key; "
                        + "the metadata quorum's nodes present that store's certificate to each other");
            }
        } catch (java.security.KeyStoreException e) {
            throw new IllegalArgumentException("ssl.keystore.location: cannot read " + keystore + ": "
                    + e.getMessage(), e);
        }
        return this;
    }

    /** Makes {@code server} (not yet started) accept TLS only, from peers with a trusted certificate. */
    void configureServer(com.alipay.remoting.rpc.RpcServer server) {
        server.option(BoltServerOption.SRV_SSL_ENABLE, true);
        server.option(BoltServerOption.SRV_SSL_NEED_CLIENT_AUTH, true);
        server.option(BoltServerOption.SRV_SSL_KEYSTORE, keystore.toString());
        server.option(BoltServerOption.SRV_SSL_KEYSTORE_PASS, password);
        server.option(BoltServerOption.SRV_SSL_KEYSTORE_TYPE, type);
    }

    /** Makes {@code client} (not yet started) connect with TLS, presenting the store's certificate. */
    void configureClient(com.alipay.remoting.rpc.RpcClient client) {
        client.option(BoltClientOption.CLI_SSL_ENABLE, true);
        client.option(BoltClientOption.CLI_SSL_KEYSTORE, keystore.toString());
        client.option(BoltClientOption.CLI_SSL_KEYSTORE_PASS, password);
        client.option(BoltClientOption.CLI_SSL_KEYSTORE_TYPE, type);
    }

    @Override
    public String toString() {
        return "QuorumTls[" + keystore + ", " + type + "]"; // no password
    }
}
