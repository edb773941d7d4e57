/**
 * Logistic regression trained online: p(up | x) = σ(w·x + b), one stochastic gradient step per
 * labelled sample on the log loss with L2 weight decay. Plain numbers, no state but the weights,
 * so the same samples in the same order give the same model (replays and backtests are exact).
 */

export interface OnlineLogisticOptions {
  /** Number of features (the bias is separate). */
  features: number;
  /** Step size of each update; default 0.05. */
  learningRate?: number;
  /** L2 weight decay per update; default 1e-4. */
  l2?: number;
}

export class OnlineLogistic {
  readonly weights: Float64Array;
  bias = 0;
  /** Samples learned. */
  samples = 0;
  private readonly rate: number;
  private readonly l2: number;

  constructor(options: OnlineLogisticOptions) {
    this.weights = new Float64Array(options.features);
    this.rate = options.learningRate ?? 0.05;
    this.l2 = options.l2 ?? 1e-4;
  }

  /** The probability that the label is 1 for features `x`. */
  predict(x: ArrayLike<number>): number {
    let z = this.bias;
    for (let i = 0; i < this.weights.length; i++) z += this.weights[i]! * x[i]!;
    return 1 / (1 + Math.exp(-z));
  }

  /** One gradient step towards `label` (0 or 1) at `x`. */
  learn(x: ArrayLike<number>, label: 0 | 1): void {
    const error = this.predict(x) - label;
    for (let i = 0; i < this.weights.length; i++) this.weights[i]! -= this.rate * (error * x[i]! + this.l2 * this.weights[i]!);
    this.bias -= this.rate * error;
    this.samples++;
  }
}
