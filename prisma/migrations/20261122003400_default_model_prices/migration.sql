-- Default prices of common model families (data only; no schema change).
--
-- Unit: micro-dollars per million tokens, i.e. the list price in USD per 1M tokens
-- times 1,000,000. A name ending in `*` is a prefix: metering uses the exact name
-- first, then the longest matching prefix, then DEFAULT_MODEL_PRICE.
-- Models sold per image (dall-e) bill 1,000 output tokens per image, so their
-- output price is the price of one image times 1,000 per million tokens.
-- Prices an administrator has already set are never overwritten.

INSERT INTO "ModelPrice" ("model", "inputPrice", "outputPrice", "updatedAt") VALUES
  -- OpenAI GPT-4o
  ('gpt-4o*',                    2500000,  10000000, CURRENT_TIMESTAMP),
  ('gpt-4o-2024-05-13',          5000000,  15000000, CURRENT_TIMESTAMP),
  ('chatgpt-4o-latest',          5000000,  15000000, CURRENT_TIMESTAMP),
  ('gpt-4o-mini*',                150000,    600000, CURRENT_TIMESTAMP),
  -- OpenAI GPT-4.1
  ('gpt-4.1*',                   2000000,   8000000, CURRENT_TIMESTAMP),
  ('gpt-4.1-mini*',               400000,   1600000, CURRENT_TIMESTAMP),
  ('gpt-4.1-nano*',               100000,    400000, CURRENT_TIMESTAMP),
  -- OpenAI GPT-5
  ('gpt-5*',                     1250000,  10000000, CURRENT_TIMESTAMP),
  ('gpt-5-mini*',                 250000,   2000000, CURRENT_TIMESTAMP),
  ('gpt-5-nano*',                  50000,    400000, CURRENT_TIMESTAMP),
  -- OpenAI reasoning models
  ('o1*',                       15000000,  60000000, CURRENT_TIMESTAMP),
  ('o1-mini*',                   1100000,   4400000, CURRENT_TIMESTAMP),
  ('o1-pro*',                  150000000, 600000000, CURRENT_TIMESTAMP),
  ('o3*',                        2000000,   8000000, CURRENT_TIMESTAMP),
  ('o3-mini*',                   1100000,   4400000, CURRENT_TIMESTAMP),
  ('o3-pro*',                   20000000,  80000000, CURRENT_TIMESTAMP),
  ('o4-mini*',                   1100000,   4400000, CURRENT_TIMESTAMP),
  -- Older OpenAI chat models
  ('gpt-4*',                    30000000,  60000000, CURRENT_TIMESTAMP),
  ('gpt-4-32k*',                60000000, 120000000, CURRENT_TIMESTAMP),
  ('gpt-4-turbo*',              10000000,  30000000, CURRENT_TIMESTAMP),
  ('gpt-4-1106-preview',        10000000,  30000000, CURRENT_TIMESTAMP),
  ('gpt-4-0125-preview',        10000000,  30000000, CURRENT_TIMESTAMP),
  ('gpt-4.5-preview*',          75000000, 150000000, CURRENT_TIMESTAMP),
  ('gpt-3.5-turbo*',              500000,   1500000, CURRENT_TIMESTAMP),
  ('gpt-3.5-turbo-instruct*',    1500000,   2000000, CURRENT_TIMESTAMP),
  -- OpenAI embeddings and images
  ('text-embedding-3-small',       20000,         0, CURRENT_TIMESTAMP),
  ('text-embedding-3-large',      130000,         0, CURRENT_TIMESTAMP),
  ('text-embedding-ada-002',      100000,         0, CURRENT_TIMESTAMP),
  ('dall-e-3',                         0,  40000000, CURRENT_TIMESTAMP),
  ('dall-e-2',                         0,  20000000, CURRENT_TIMESTAMP),
  ('gpt-image-1*',               5000000,  40000000, CURRENT_TIMESTAMP),
  -- Anthropic Claude
  ('claude-3-5-sonnet*',         3000000,  15000000, CURRENT_TIMESTAMP),
  ('claude-3-7-sonnet*',         3000000,  15000000, CURRENT_TIMESTAMP),
  ('claude-sonnet-4*',           3000000,  15000000, CURRENT_TIMESTAMP),
  ('claude-3-5-haiku*',           800000,   4000000, CURRENT_TIMESTAMP),
  ('claude-3-haiku*',             250000,   1250000, CURRENT_TIMESTAMP),
  ('claude-3-opus*',            15000000,  75000000, CURRENT_TIMESTAMP),
  ('claude-opus-4*',            15000000,  75000000, CURRENT_TIMESTAMP),
  -- Google Gemini
  ('gemini-1.5-pro*',            1250000,   5000000, CURRENT_TIMESTAMP),
  ('gemini-1.5-flash*',            75000,    300000, CURRENT_TIMESTAMP),
  ('gemini-2.0-flash*',           100000,    400000, CURRENT_TIMESTAMP),
  ('gemini-2.5-pro*',            1250000,  10000000, CURRENT_TIMESTAMP),
  ('gemini-2.5-flash*',           300000,   2500000, CURRENT_TIMESTAMP),
  -- DeepSeek and Mistral
  ('deepseek-chat',               270000,   1100000, CURRENT_TIMESTAMP),
  ('deepseek-reasoner',           550000,   2190000, CURRENT_TIMESTAMP),
  ('mistral-large*',             2000000,   6000000, CURRENT_TIMESTAMP),
  ('mistral-small*',              100000,    300000, CURRENT_TIMESTAMP)
ON CONFLICT ("model") DO NOTHING;
