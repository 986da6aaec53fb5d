export interface DatabaseOptions {
  url: string;
  poolSize: number;
}
