#!/usr/bin/env bash
# Measures what partitioning UsageLog by month changes (docs/scaling.md, "Usage
# partitions"): the same N rows spread over 12 months, in the partitioned UsageLog the
# migrations build and in a plain copy of it with the same indexes; then a settlement's
# insert of 500 rows, a month's report, and dropping the oldest month, on each.
#
#   ROWS=1000000 scripts/measure-usage-partitions.sh     # needs libs/db built
#
# DATABASE_URL names the server (its maintenance database); a scratch database is made and
# dropped. Not part of CI: a million rows take about a minute to load on 2 busy cores.
set -euo pipefail
ROWS="${ROWS:-1000000}"
SERVER="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}"
NAME="sy_measure_$$"
BASE="${SERVER%/*}"
URL="$BASE/$NAME"
cd "$(dirname "$0")/.."

psql -q "$SERVER" -c "CREATE DATABASE $NAME"
trap 'psql -q "$SERVER" -c "DROP DATABASE IF EXISTS $NAME WITH (FORCE)"' EXIT
(cd libs/db && node --input-type=module -e "
  const db = await import('./dist/index.js');
  await db.applyMigrations(process.argv[1], db.defaultMigrationsDirectory());" "$URL")

run() { psql -q -X "$URL" -v ON_ERROR_STOP=1 "$@"; }
ms() { # ms <sql>: wall time of one statement, from psql's \timing
  run -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

run <<SQL
-- Twelve months ending with the current one, partitions for each.
DO \$\$
DECLARE m date := (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '11 months')::date;
BEGIN
  WHILE m < date_trunc('month', now() AT TIME ZONE 'UTC') LOOP
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF "UsageLog" FOR VALUES FROM (%L) TO (%L)',
      'UsageLog_' || to_char(m, 'YYYY_MM'), m::text || ' 00:00:00+00',
      (m + interval '1 month')::date::text || ' 00:00:00+00');
    m := (m + interval '1 month')::date;
  END LOOP;
END \$\$;
-- No tokens or channels are made: neither table checks foreign keys here.
ALTER TABLE "UsageLog" DROP CONSTRAINT "UsageLog_tokenId_fkey",
  DROP CONSTRAINT "UsageLog_channelId_fkey", DROP CONSTRAINT "UsageLog_channelKeyId_fkey";
CREATE TABLE "Flat" (LIKE "UsageLog" INCLUDING DEFAULTS);
ALTER TABLE "Flat" ADD PRIMARY KEY ("id", "requestedAt");
CREATE UNIQUE INDEX ON "Flat" ("requestId", "requestedAt");
CREATE INDEX ON "Flat" ("requestedAt");
CREATE INDEX ON "Flat" ("tokenId", "requestedAt");
CREATE INDEX ON "Flat" ("channelId", "requestedAt");
CREATE INDEX ON "Flat" ("model", "requestedAt");
CREATE INDEX ON "Flat" ("teamId", "requestedAt");
SQL

START=$(date +%s)
GEN="SELECT 'load-' || g, 1 + g % 200, 1 + g % 20, 'chat.completions', 'model-' || (g % 12), 100, 50, 1234, 200, 300,
       date_trunc('month', now()) - interval '11 months' + (g::float8 / $ROWS) * (now() - (date_trunc('month', now()) - interval '11 months'))
     FROM generate_series(1, $ROWS) g"
COLS='"requestId", "tokenId", "channelId", endpoint, model, "promptTokens", "completionTokens", cost, status, "latencyMs", "requestedAt"'
LOAD_P=$(ms "INSERT INTO \"UsageLog\" ($COLS) $GEN")
LOAD_F=$(ms "INSERT INTO \"Flat\" ($COLS) $GEN")
run -c 'VACUUM ANALYZE "UsageLog"' -c 'VACUUM ANALYZE "Flat"'

batch() { # 500 rows of now, as one settlement inserts them
  echo "INSERT INTO \"$1\" ($COLS) SELECT 'b-$1-' || g || '-' || clock_timestamp(), 1 + g % 200, 1 + g % 20, 'chat.completions', 'model-1', 100, 50, 1234, 200, 300, now() FROM generate_series(1, 500) g ON CONFLICT DO NOTHING"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
INS_P=$(for i in $(seq 1 15); do ms "$(batch UsageLog)"; done | median)
INS_F=$(for i in $(seq 1 15); do ms "$(batch Flat)"; done | median)

REPORT="SELECT model, count(*), sum(cost) FROM \"%s\" WHERE \"requestedAt\" >= date_trunc('month', now()) - interval '3 months' AND \"requestedAt\" < date_trunc('month', now()) - interval '2 months' GROUP BY 1"
REP_P=$(for i in 1 2 3; do ms "$(printf "$REPORT" UsageLog)"; done | median)
REP_F=$(for i in 1 2 3; do ms "$(printf "$REPORT" Flat)"; done | median)
TOKEN="SELECT * FROM \"%s\" WHERE \"tokenId\" = 7 ORDER BY \"requestedAt\" DESC LIMIT 50"
TOK_P=$(for i in 1 2 3; do ms "$(printf "$TOKEN" UsageLog)"; done | median)
TOK_F=$(for i in 1 2 3; do ms "$(printf "$TOKEN" Flat)"; done | median)

OLDEST="UsageLog_$(psql -AtX "$URL" -c "SELECT to_char(date_trunc('month', now()) - interval '11 months', 'YYYY_MM')")"
DROP_P=$(ms "DROP TABLE \"$OLDEST\"")
DROP_F=$(ms "DELETE FROM \"Flat\" WHERE \"requestedAt\" < date_trunc('month', now()) - interval '10 months'")

cat <<REPORT
rows: $ROWS over 12 months (load took $(( $(date +%s) - START )) s in all)
                                    partitioned    plain
load (one INSERT of all rows, ms)   $LOAD_P    $LOAD_F
settlement insert, 500 rows (ms)    $INS_P    $INS_F
one month's totals by model (ms)    $REP_P    $REP_F
a token's newest 50 (ms)            $TOK_P    $TOK_F
retention of the oldest month (ms)  $DROP_P (DROP)    $DROP_F (DELETE)
REPORT
