package dev.millrace.jms.wire.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.millrace.protocol.net.BrokerChannel;
import dev.millrace.protocol.net.ClientSecurity;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;

/** {@link ClusterLookup#connectAny}: which broker of the list a caller reaches. */
@Timeout(60)
class ClusterLookupTest {

    private final EventLoopGroup loops = new NioEventLoopGroup(1);
    private final List<ServerSocket> servers = new ArrayList<>();
    private final List<Socket> accepted = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (Socket s : accepted) {
            s.close();
        }
        for (ServerSocket s : servers) {
            s.close();
        }
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /**
     * Calls one after the other start at different brokers, so a retry after a failure asks another broker first:
     * over six calls to a list of three reachable brokers, every broker is reached (with the first of the list
     * always tried first, one would get all six).
     */
    @Test
    void shouldStartEachCallAtAnotherBrokerOfTheList() throws Exception {
        StringBuilder brokers = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            server.setSoTimeout(10_000);
            servers.add(server);
            brokers.append(i == 0 ? "" : ",").append("127.0.0.1:").append(server.getLocalPort());
        }
        List<BrokerChannel> channels = new ArrayList<>();
        for (int call = 0; call < 6; call++) {
            channels.add(ClusterLookup.connectAny(loops.next(), brokers.toString(), "lookup-test", 10_000,
                    ClientSecurity.PLAINTEXT).get(20, TimeUnit.SECONDS));
        }
        int[] reached = new int[3];
        for (int i = 0; i < 3; i++) {
            reached[i] = drain(servers.get(i));
        }
        channels.forEach(BrokerChannel::close);
        assertThat(reached).as("connections per broker of the list").doesNotContain(0);
        assertThat(reached[0] + reached[1] + reached[2]).isEqualTo(6);
    }

    /** Accepts what {@code server} has queued: the first accept waits (a broker reached by none fails the test). */
    private int drain(ServerSocket server) throws Exception {
        int n = 0;
        try {
            while (true) {
                accepted.add(server.accept());
                n++;
                server.setSoTimeout(200);
            }
        } catch (SocketTimeoutException done) {
            return n;
        }
    }
}
