package dev.millrace.broker.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class TestPortsTest {

    @Test
    void shouldRefuseAPortThatAnotherJvmReserved() throws Exception {
        int port = TestPorts.reserve();

        assertThat(claimInAnotherJvm(port)).as("port %d, held by this JVM", port).isEqualTo("false");
        assertThat(TestPorts.tryReserve(port)).as("the same JVM hands a port out once").isFalse();
    }

    @Test
    void shouldLetAnotherJvmClaimAPortNobodyHolds() throws Exception {
        int port;
        do {
            port = 15_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(17_000);
        } while (!bindable(port));

        assertThat(claimInAnotherJvm(port)).isEqualTo("true");
    }

    @Test
    void shouldRefuseAPortSomethingListensOn() throws Exception {
        int port = TestPorts.reserve();
        try (ServerSocket listening = new ServerSocket()) {
            listening.bind(new InetSocketAddress("127.0.0.1", port));
            assertThat(claimInAnotherJvm(port)).isEqualTo("false");
        }
        int block = TestPorts.reserveBlock(3, 100, 2);
        assertThat(claimInAnotherJvm(block + 201)).as("the last port of the block").isEqualTo("false");
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /** What {@link TestPorts#tryReserve} answers in a fresh JVM for {@code port}. */
    private static String claimInAnotherJvm(int port) throws Exception {
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Claim.class.getName(), String.valueOf(port))
                .redirectErrorStream(true).start();
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    }

    /** Run in a child JVM: prints whether it could claim the port given. */
    public static final class Claim {
        public static void main(String[] args) {
            System.out.println(TestPorts.tryReserve(Integer.parseInt(args[0])));
        }
    }
}
