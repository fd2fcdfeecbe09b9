package io.partita.gateway.grpc;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC transport: grpc-java on Netty event loops (HTTP/2), its calls run on the gateway's
 * handler executor. Bounds: the largest message ({@code gateway.max.body.bytes}), a handshake
 * (connection preface and settings) within the header timeout, idle connections closed after the
 * idle timeout, and at most {@code maxConnections} concurrent calls per connection.
 */
public final class GrpcFrontDoor implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(GrpcFrontDoor.class);

  /**
   * @param port the port; 0 picks a free one
   * @param maxMessageBytes the largest request message
   * @param handshakeTimeoutMs how long a new connection may take to say it speaks HTTP/2
   * @param idleTimeoutMs how long a connection with no call in progress stays open
   * @param maxConcurrentCalls most calls in progress on one connection
   */
  public record Settings(int port, int maxMessageBytes, long handshakeTimeoutMs, long idleTimeoutMs, int maxConcurrentCalls) {}

  private final Server server;

  private GrpcFrontDoor(Server server) {
    this.server = server;
  }

  public static GrpcFrontDoor start(Settings settings, GrpcApi api, Executor handlers) throws IOException {
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress(settings.port()))
        .executor(handlers)
        .maxInboundMessageSize(settings.maxMessageBytes())
        .maxInboundMetadataSize(16 * 1024)
        .handshakeTimeout(settings.handshakeTimeoutMs(), TimeUnit.MILLISECONDS)
        .maxConnectionIdle(settings.idleTimeoutMs(), TimeUnit.MILLISECONDS)
        .maxConcurrentCallsPerConnection(settings.maxConcurrentCalls())
        .permitKeepAliveTime(10, TimeUnit.SECONDS)
        .addService(ServerInterceptors.intercept(api, api.metadata()))
        .build();
    try {
      server.start();
    } catch (IOException e) {
      throw new IOException("gateway.grpc-port=" + settings.port() + ": cannot listen (" + e.getMessage()
          + "); choose a free port, 0 for any, or -1 to turn gRPC off", e);
    }
    return new GrpcFrontDoor(server);
  }

  public int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    server.shutdown();
    try {
      if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.shutdownNow();
    }
    log.debug("gRPC server stopped");
  }
}
