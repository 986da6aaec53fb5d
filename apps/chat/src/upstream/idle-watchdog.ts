/** Calls `onIdle` when `touch` has not been called for `ms`; the SDK's timeout ends at the headers. */
export class IdleWatchdog {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {}

  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.onIdle, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
