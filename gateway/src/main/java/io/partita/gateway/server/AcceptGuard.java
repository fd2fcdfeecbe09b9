package io.partita.gateway.server;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.InternetProtocolFamily;
import io.vertx.core.datagram.DatagramSocketOptions;
import io.vertx.core.net.ClientOptionsBase;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.spi.transport.Transport;
import java.net.SocketAddress;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Guards each accepted connection from the moment it is accepted, before Vert.x knows what it is:
 * with h2c on, Vert.x creates its connection object (and calls the connection handler) only once a
 * first request's headers, or the HTTP/2 preface, are in, so a connection that stays silent or
 * dribbles its first headers would be invisible to {@link HttpFrontDoor}'s timers. This hooks the
 * accept through Vert.x's public transport API (a transport that delegates everything to NIO and
 * puts a handler on the listening channel) and:
 * <ul>
 *   <li>closes a connection past {@code maxConnections} open ones at once;</li>
 *   <li>closes a connection whose first request headers (up to the blank line that ends them, which
 *       the HTTP/2 preface also contains) have not arrived {@code headerTimeoutMs} after accept;
 *       once they have, the guard takes itself out of the pipeline.</li>
 * </ul>
 */
final class AcceptGuard implements io.vertx.core.transport.Transport {
  private final Transport nio = io.vertx.core.transport.Transport.NIO.implementation();
  private final long headerTimeoutMs;
  private final int maxConnections;
  final AtomicInteger open = new AtomicInteger();
  final AtomicInteger refused = new AtomicInteger();
  final AtomicInteger timedOut = new AtomicInteger();

  AcceptGuard(long headerTimeoutMs, int maxConnections) {
    this.headerTimeoutMs = headerTimeoutMs;
    this.maxConnections = maxConnections;
  }

  @Override
  public String name() {
    return "nio-guarded";
  }

  @Override
  public boolean available() {
    return true;
  }

  @Override
  public Throwable unavailabilityCause() {
    return null;
  }

  @Override
  public Transport implementation() {
    return spi;
  }

  /** On the listening channel: sees each accepted channel before Vert.x initializes it. */
  @ChannelHandler.Sharable
  private final class OnAccept extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Channel child = (Channel) msg;
      if (open.get() >= maxConnections) {
        refused.incrementAndGet();
        child.unsafe().closeForcibly();
        return;
      }
      open.incrementAndGet();
      child.closeFuture().addListener(f -> open.decrementAndGet());
      child.pipeline().addFirst("partita-first-headers", new FirstHeaders());
      ctx.fireChannelRead(msg);
    }
  }

  /** Closes the connection unless the first blank line (end of headers, or of the h2 preface) arrives in time. */
  private final class FirstHeaders extends ChannelInboundHandlerAdapter {
    private ScheduledFuture<?> timer;
    private int matched; // bytes of "\r\n\r\n" seen in a row

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      timer = ctx.executor().schedule(() -> {
        timedOut.incrementAndGet();
        ctx.channel().close();
      }, headerTimeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      if (timer != null) {
        timer.cancel(false);
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf buf) {
        for (int i = buf.readerIndex(); i < buf.writerIndex(); i++) {
          byte b = buf.getByte(i);
          matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1
              : b == '\r' ? 1 : 0;
          if (matched == 4) {
            ctx.pipeline().remove(this);
            break;
          }
        }
      }
      ctx.fireChannelRead(msg);
    }
  }

  private final OnAccept onAccept = new OnAccept();

  private final Transport spi = new Transport() {
    @Override public boolean supportsDomainSockets() { return nio.supportsDomainSockets(); }
    @Override public boolean supportFileRegion() { return nio.supportFileRegion(); }
    @Override public boolean isAvailable() { return nio.isAvailable(); }
    @Override public Throwable unavailabilityCause() { return nio.unavailabilityCause(); }
    @Override public SocketAddress convert(io.vertx.core.net.SocketAddress address) { return nio.convert(address); }
    @Override public io.vertx.core.net.SocketAddress convert(SocketAddress address) { return nio.convert(address); }
    @Override public IoHandlerFactory ioHandlerFactory() { return nio.ioHandlerFactory(); }
    @Override public EventLoopGroup eventLoopGroup(int type, int threads, ThreadFactory factory, int ioRatio) {
      return nio.eventLoopGroup(type, threads, factory, ioRatio);
    }
    @Override public DatagramChannel datagramChannel() { return nio.datagramChannel(); }
    @SuppressWarnings("deprecation")
    @Override public DatagramChannel datagramChannel(InternetProtocolFamily family) { return nio.datagramChannel(family); }
    @Override public ChannelFactory<? extends Channel> channelFactory(boolean domain) { return nio.channelFactory(domain); }
    @Override public ChannelFactory<? extends ServerChannel> serverChannelFactory(boolean domain) { return nio.serverChannelFactory(domain); }
    @Override public void configure(DatagramChannel channel, DatagramSocketOptions options) { nio.configure(channel, options); }
    @Override public void configure(ClientOptionsBase options, int connectTimeout, boolean domain, Bootstrap bootstrap) {
      nio.configure(options, connectTimeout, domain, bootstrap);
    }
    @Override public void configure(NetServerOptions options, boolean domain, ServerBootstrap bootstrap) {
      nio.configure(options, domain, bootstrap);
      bootstrap.handler(onAccept);
    }
  };
}
