package io.partita.gateway.dashboard;

import io.partita.common.config.Settings;

/**
 * The live dashboard's settings ({@code /dashboard/}, see docs/dashboard.md), a group of the
 * gateway's settings ({@code GatewayConfig.dashboard}); here, with the dashboard, so that it reads
 * them without reaching up to the gateway's assembly.
 *
 * @param enabled whether the gateway serves it ({@code gateway.dashboard.enabled}, default true)
 * @param deadLetters how many of the last dead letters it shows ({@code gateway.dashboard.dead-letters}, default 50)
 * @param timings how many of the last records of {@code profile.timings} it reads at start, per
 *     partition ({@code gateway.dashboard.timings}, default 100000)
 * @param pushIntervalMs how often open pages get the views that changed ({@code gateway.dashboard.push.interval.ms}, default 1000)
 * @param windowSeconds the window of the request rate and percentiles ({@code gateway.dashboard.window.seconds}, default 10)
 * @param historySeconds how far back the traffic sparklines go, and the overview counts dead letters
 *     ({@code gateway.dashboard.history.seconds}, default 300)
 */
public record DashboardConfig(boolean enabled, int deadLetters, int timings, long pushIntervalMs, int windowSeconds,
    int historySeconds) {

  public static DashboardConfig from(Settings settings) {
    return new DashboardConfig(
        settings.bool("gateway.dashboard.enabled", true),
        settings.integer("gateway.dashboard.dead-letters", 50, 1, 10_000),
        settings.integer("gateway.dashboard.timings", 100_000, 1, 10_000_000),
        settings.longValue("gateway.dashboard.push.interval.ms", 1000, 100, 60_000),
        settings.integer("gateway.dashboard.window.seconds", 10, 1, 600),
        settings.integer("gateway.dashboard.history.seconds", 300, 10, 3600));
  }
}
