package dev.reconcile.core;

/**
 * How many coded symbols the receiver grants the sender next: receiver-granted credit for the
 * rateless stream, so that a long round trip costs round trips, not a bandwidth-delay product of
 * unwanted symbols.
 *
 * <h2>Policy</h2>
 *
 * Decoding {@code d} differences needs {@code N} symbols with {@code N = 1.35 d + sqrt(d)} on
 * average and a spread of about {@code sqrt(d)} ({@code RatelessStatisticsTest}). The receiver
 * knows two lower bounds on {@code d} for free, the count difference {@code Delta = |A| - |B|} from
 * the fingerprints and the elements recovered so far, and may expect a {@code d} (a prior: in an
 * agent the smaller {@code d} of its last two rounds with this peer, shared out over the streams).
 *
 * <ol>
 *   <li><b>First grant</b>: {@code max(firstBatch, 1.35 d0 + 2 sqrt(d0))} with {@code d0 = max(b,
 *       prior)}, {@code b} the known lower bound ({@code |Delta|}, or for a stream of a group of
 *       partitions the sum of their {@code |Delta_p|}): one round trip whenever the difference is
 *       one-sided and the count says it all, or the prior is right; never more than {@code 2
 *       sqrt(d0)} symbols beyond the typical need when {@code d0} is {@code d}. (A prior above
 *       {@code d} costs its excess in symbols: docs/rateless.md.)
 *   <li><b>Then</b>, after each batch has arrived without completing, with {@code r} symbols
 *       received: without an estimate, {@code max(minBatch, growth * r)} ({@code growth} is the
 *       configured fraction, default 1/4: overshoot below 25 % of the need plus one batch, in
 *       {@code log_(1 + growth)} round trips). With the estimate ({@link Estimate}, below): jump to
 *       {@code 1.35 dLow - sqrt(dLow)} (a lower bound of the need) when that is further, where
 *       {@code dLow} is the estimate minus one standard error; once there, advance by two standard
 *       deviations of the need ({@code 2 sqrt((1.35 se)^2 + d)}), at least {@code minBatch} and at
 *       most {@code growth * r}. One standard error rather than two: the measured trade ({@code
 *       RatelessPacingTest}, docs/rateless.md) is 4-5 round trips instead of 5-7 at {@code d = 30
 *       .. 10^4} when the count difference says little, for a few percent more overshoot.
 * </ol>
 *
 * <h2>Estimating d from the received symbols</h2>
 *
 * For {@code i >= 1} an element of the difference is in symbol {@code i} independently with
 * probability {@code rho_i = 2/(i+2)}, so the count difference {@code c_i} (local minus remote) has
 * mean {@code Delta rho_i} and variance {@code d p_i}, {@code p_i = rho_i (1 - rho_i)}, whatever
 * the split of {@code d} between the sides. Each received symbol thus gives an unbiased estimate
 * {@code t_i = (c_i - Delta rho_i)^2 / p_i} of {@code d}, of variance about {@code 2 d^2 + d /
 * p_i}; the estimate is their inverse-variance weighted mean (weights from the previous iterate,
 * three iterations) and its standard error {@code (sum 1/var_i)^(-1/2)}, about {@code d sqrt(2 /
 * r)}. It needs {@code Delta} exactly: the given count difference is used when it agrees with
 * symbol 0 modulo {@code 2^16}, else symbol 0's (exact while {@code |Delta| < 2^15}). Counts arrive
 * modulo {@code 2^16}; {@code c_i - Delta rho_i} is reduced to {@code [-2^15, 2^15)}, exact while
 * the spread {@code sqrt(d rho_i)} stays far below {@code 2^15}.
 *
 * <p>The fraction of empty difference symbols ({@code P(empty at i) = (1 - rho_i)^d ~ exp(-2d /
 * (i+2))}) also estimates {@code d}, but only from symbols {@code i ~ d}, i.e. once most of the
 * needed symbols have arrived; the count moments are informative from the first batch on.
 *
 * <p>Pure and deterministic: the same decoder state gives the same grant. Not thread-safe.
 */
public final class RatelessPacing {
  /** Symbols per difference for large d (the asymptotic need). */
  static final double SYMBOLS_PER_DIFFERENCE = 1.35;

  /** Standard errors between the estimate and its lower confidence bound. */
  static final double Z = 1.0;

  /** Standard deviations of the need granted per batch once the lower bound is reached. */
  static final double NEAR = 2.0;

  /**
   * Pacing configuration.
   *
   * @param firstBatch least symbols of the first grant
   * @param minBatch least symbols of any later grant
   * @param growth the largest later grant as a fraction of the symbols received ({@code > 0})
   * @param estimate whether later grants use the estimate of {@code d} (else plain growth)
   * @param groups whether to offer grouped streams ({@code MODE_RATELESS_GROUPED}: the unequal
   *     partitions of a round with a small known difference share one stream, see {@code
   *     RatelessExchange})
   */
  public record Config(
      int firstBatch, int minBatch, double growth, boolean estimate, boolean groups) {
    /** 16 symbols first (224 B), batches of at least 16, growth 1/4, estimate on. */
    public static final Config DEFAULT = new Config(16, 16, 0.25, true);

    /**
     * The sessions' pacing: 4 symbols first (a stream of one partition holds one or two differences
     * when differences are few) and batches of at least 8; grouped streams offered.
     */
    public static final Config SESSION = new Config(4, 8, 0.25, true);

    /** A configuration that offers grouped streams. */
    public Config(int firstBatch, int minBatch, double growth, boolean estimate) {
      this(firstBatch, minBatch, growth, estimate, true);
    }

    public Config {
      if (firstBatch < 1 || minBatch < 1) {
        throw new IllegalArgumentException(
            "batches must hold at least one symbol: first " + firstBatch + ", min " + minBatch);
      }
      if (!(growth > 0 && growth <= 16)) {
        throw new IllegalArgumentException("growth " + growth + " is not in (0, 16]");
      }
    }

    /** This configuration, offering grouped streams or not. */
    public Config withGroups(boolean g) {
      return new Config(firstBatch, minBatch, growth, estimate, g);
    }
  }

  /**
   * An estimate of the difference size from {@code symbols} received symbols.
   *
   * @param d the estimate
   * @param standardError its standard error
   * @param symbols symbols it used
   */
  public record Estimate(double d, double standardError, int symbols) {}

  private final Config config;
  private final int limit;
  private final long countDifference;
  private final long bound;
  private final long prior;
  private int granted;
  private int grants;

  /**
   * Pacing of one stream.
   *
   * @param limit the most symbols the receiver accepts (its prefix size {@code M})
   * @param countDifference local count minus the peer's count over the partitions of the stream
   *     ({@code |A| - |B|}, from the fingerprints)
   * @param prior the difference size expected for this stream, or {@code <= 0} if none
   */
  public RatelessPacing(Config config, int limit, long countDifference, long prior) {
    this(config, limit, countDifference, Math.abs(countDifference), prior);
  }

  /**
   * Pacing of one stream with a known lower bound on its difference beyond {@code
   * |countDifference|}: a stream of a group of partitions knows the sum of the partitions' count
   * differences in absolute value, which their signed sum may understate.
   *
   * @param bound a lower bound on the difference size (at least {@code |countDifference|})
   */
  public RatelessPacing(Config config, int limit, long countDifference, long bound, long prior) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit " + limit + " < 1");
    }
    if (bound < Math.abs(countDifference)) {
      throw new IllegalArgumentException(
          "bound " + bound + " below the count difference " + countDifference);
    }
    this.config = config;
    this.limit = limit;
    this.countDifference = countDifference;
    this.bound = bound;
    this.prior = prior;
  }

  /** The first grant (symbols {@code [0, firstGrant())}); call once. */
  public int firstGrant() {
    if (grants != 0) {
      throw new IllegalStateException("the first grant was already made");
    }
    double d0 = Math.max((double) bound, prior > 0 ? prior : 0);
    double want = SYMBOLS_PER_DIFFERENCE * d0 + 2 * Math.sqrt(d0);
    return grant(Math.max(config.firstBatch(), ceil(want)));
  }

  /**
   * Symbols to grant next, after every granted symbol has arrived at {@code decoder}: 0 when it is
   * complete, failed or exhausted, or when granted symbols are still outstanding.
   */
  public int nextGrant(RatelessDecoder decoder) {
    return nextGrant(decoder, limit);
  }

  /**
   * As {@link #nextGrant(RatelessDecoder)}, but granting no symbol at or past {@code upTo} (when it
   * is beyond what was granted): a caller that wants a few more symbols for a sharper estimate
   * before a large jump.
   */
  public int nextGrant(RatelessDecoder decoder, int upTo) {
    if (grants == 0) {
      throw new IllegalStateException("make the first grant first");
    }
    int r = decoder.received();
    if (decoder.complete() || decoder.failed() || r >= limit || r < granted) {
      return 0;
    }
    int cap = upTo > granted ? upTo - granted : Integer.MAX_VALUE;
    int step = Math.max(config.minBatch(), ceil(config.growth() * r));
    if (!config.estimate()) {
      return grant(Math.min(cap, step));
    }
    Estimate e = estimate(decoder);
    double known =
        Math.max(Math.max(Math.abs((double) delta(decoder)), (double) bound), decoder.recovered());
    double d = Math.max(known, e.d());
    double dLow = Math.max(known, e.d() - Z * e.standardError());
    int jump = ceil(SYMBOLS_PER_DIFFERENCE * dLow - Math.sqrt(dLow)) - r;
    double se = SYMBOLS_PER_DIFFERENCE * e.standardError();
    int near = ceil(NEAR * Math.sqrt(se * se + d));
    return grant(Math.min(cap, Math.max(jump, Math.max(config.minBatch(), Math.min(step, near)))));
  }

  /** Symbols granted so far. */
  public int granted() {
    return granted;
  }

  /** Grants made so far (round trips of the stream). */
  public int grants() {
    return grants;
  }

  /**
   * The estimate of {@code d} from the count differences of the symbols {@code decoder} received
   * (see the class comment); {@code d = 0, standardError = +inf} before symbol 1 arrived.
   */
  public Estimate estimate(RatelessDecoder decoder) {
    int r = decoder.received();
    if (r < 2) {
      return new Estimate(0, Double.POSITIVE_INFINITY, 0);
    }
    double delta = delta(decoder);
    double d = Math.max(1, Math.abs(delta));
    double info = 0;
    for (int iter = 0; iter < 3; iter++) {
      double num = 0;
      info = 0;
      for (int i = 1; i < r; i++) {
        double rho = 2.0 / (i + 2);
        double p = rho * (1 - rho);
        double dev = decoder.rawCountDifference(i) - delta * rho;
        dev -= 65536.0 * Math.rint(dev / 65536.0);
        double inv = 1.0 / (2 * d * d + d / p);
        num += dev * dev / p * inv;
        info += inv;
      }
      d = Math.max(num / info, 0.5);
    }
    return new Estimate(d, 1.0 / Math.sqrt(info), r - 1);
  }

  /** {@code Delta}: the given count difference if symbol 0 agrees with it, else symbol 0's. */
  private long delta(RatelessDecoder decoder) {
    if (decoder.received() == 0) {
      return countDifference;
    }
    int c0 = decoder.rawCountDifference(0);
    return (short) countDifference == c0 ? countDifference : c0;
  }

  private int grant(int want) {
    int g = Math.max(0, Math.min(want, limit - granted));
    granted += g;
    if (g > 0) {
      grants++;
    }
    return g;
  }

  private static int ceil(double v) {
    return v >= Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) Math.max(0, Math.ceil(v));
  }
}
