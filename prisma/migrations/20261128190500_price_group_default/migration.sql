-- The price group every team and token starts in: prices as listed (docs/teams.md,
-- "Price groups"). It always exists; the admin refuses to delete it.
INSERT INTO "PriceGroup" ("name", "multiplier", "updatedAt")
VALUES ('default', 1000000, now())
ON CONFLICT ("name") DO NOTHING;
