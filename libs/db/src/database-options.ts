export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /**
   * A streaming replica for reports (DATABASE_READ_URL): only the reads a service sends
   * through `ReportingDatabase` go there. Unset: they go to `url` (docs/scaling.md, "Read
   * replica").
   */
  readUrl?: string;
}
