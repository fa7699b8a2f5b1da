import cliProgress from 'cli-progress';

export interface Progress {
  /** Sets the total (unknown totals show the count only). */
  start(total: number): void;
  update(value: number, total?: number): void;
  stop(): void;
}

const NO_PROGRESS: Progress = { start() {}, update() {}, stop() {} };

/**
 * A progress bar with rate and ETA on stderr, only when stderr is a terminal: redirected or piped output
 * (scripts, CI, `> file`) gets no control characters.
 */
export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return NO_PROGRESS;
  let startedAt = 0;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted}`,
      barsize: 30,
      hideCursor: true,
      etaBuffer: 50,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  const rate = (value: number): string => {
    const seconds = (performance.now() - startedAt) / 1000;
    return seconds > 0 ? String(Math.round(value / seconds)) : '0';
  };
  return {
    start(total) {
      startedAt = performance.now();
      bar.start(total, 0, { rate: '0' });
    },
    update(value, total) {
      if (total !== undefined) bar.setTotal(total);
      bar.update(value, { rate: rate(value) });
    },
    stop() {
      bar.stop();
    },
  };
}
