import { query, waitFor } from '@switchyard/testing';
import OpenAI from 'openai';
import { pricedModel, useProviderGateway } from '../support/provider-gateway.js';
import { freshAccount } from '../support/stack.js';

// Stored Responses through the gateway (docs/providers.md, "Stored responses"): a Response
// OpenAI keeps can be read back, listed, cancelled and deleted, each follow-up sent to the
// channel and the upstream key that created it. The mock keeps Responses per account key
// and answers 404 to any other, so a follow-up routed like a new request (three keys on two
// channels here) would fail most of the time.

interface FollowUpRow {
  endpoint: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cost: string;
  status: number;
  channelId: number | null;
  channelKeyId: number | null;
}

describe('gateway: stored Responses follow their channel and key', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let model: string;
  const channels: { id: number; keyIds: number[] }[] = [];

  beforeAll(async () => {
    model = await pricedModel(stack, 'stored');
    channels.push(
      await stack.createChannel({
        models: [model],
        keys: [await freshAccount(stack), await freshAccount(stack)],
        modelMapping: { [model]: 'gpt-4o-mini' },
      }),
      await stack.createChannel({
        models: [model],
        keys: [await freshAccount(stack)],
        modelMapping: { [model]: 'gpt-4o-mini' },
      }),
    );
    await stack.routable(gateway.token.key, model);
  });

  const followUpRow = (requestId: string): Promise<FollowUpRow> =>
    waitFor(
      async () =>
        (
          await query<FollowUpRow>(
            stack.databaseUrl,
            `SELECT endpoint, model, "promptTokens", "completionTokens", cost::text, status, "channelId", "channelKeyId"
               FROM "UsageLog" WHERE "requestId" = $1`,
            [requestId],
          )
        )[0],
      { what: `usage row ${requestId}` },
    );

  it('reads back, lists the input of and deletes each of several Responses, at no cost', async () => {
    const { openai } = gateway;
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        openai.responses.create({ model, input: `note ${i}` }).withResponse(),
      ),
    );
    const created = made.map(({ data }) => data);
    for (const [i, response] of created.entries()) {
      const { data: read, response: http } = await openai.responses
        .retrieve(response.id)
        .withResponse();
      expect(read).toMatchObject({ id: response.id, status: 'completed' });
      expect(read.output_text).toBe(`Echo: note ${i}`);
      const row = await followUpRow(http.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'responses',
        model,
        promptTokens: 0,
        completionTokens: 0,
        cost: '0',
        status: 200,
      });
      // The very channel and key the Response was made with.
      const creation = await followUpRow(made[i]!.response.headers.get('x-request-id')!);
      expect(creation.cost).not.toBe('0');
      expect(row.channelId).toBe(creation.channelId);
      expect(row.channelKeyId).toBe(creation.channelKeyId);
      expect(channels.flatMap((c) => c.keyIds)).toContain(row.channelKeyId);

      const items = await openai.responses.inputItems.list(response.id);
      expect(items.data).toHaveLength(1);
      expect(items.data[0]).toMatchObject({ type: 'message', role: 'user' });
    }
    // The SDK types it as nothing, but hands over what OpenAI answers.
    const deleted: unknown = await openai.responses.delete(created[0]!.id);
    expect(deleted).toEqual({ id: created[0]!.id, object: 'response', deleted: true });
    const gone = await openai.responses.retrieve(created[0]!.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
  });

  it('polls a background Response to its end, and cancels another', async () => {
    const { openai } = gateway;
    const polled = await openai.responses.create({ model, input: 'later', background: true });
    expect(polled.status).toBe('queued');
    expect((await openai.responses.retrieve(polled.id)).status).toBe('completed');

    const cancelled = await openai.responses.create({ model, input: 'never', background: true });
    const answer = await openai.responses.cancel(cancelled.id);
    expect(answer).toMatchObject({ id: cancelled.id, status: 'cancelled' });
    // A second cancel is the upstream's refusal, passed on as it worded it.
    const again = await openai.responses.cancel(cancelled.id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('remembers a streamed Response from its first event', async () => {
    const stream = gateway.openai.responses.stream({ model, input: 'streamed' });
    const final = await stream.finalResponse();
    const read = await gateway.openai.responses.retrieve(final.id);
    expect(read.output_text).toBe('Echo: streamed');
  });

  it('answers 404 to another token, and to a Response that was not stored', async () => {
    const mine = await gateway.openai.responses.create({ model, input: 'mine' });
    const other = stack.client((await stack.createToken()).key);
    for (const call of [
      () => other.responses.retrieve(mine.id),
      () => other.responses.delete(mine.id),
      () => other.responses.cancel(mine.id),
      () => other.responses.inputItems.list(mine.id),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'response_not_found',
        param: 'response_id',
      });
    }
    const unstored = await gateway.openai.responses.create({ model, input: 'x', store: false });
    const error = await gateway.openai.responses.retrieve(unstored.id).catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('response_not_found');
    // Still readable by its own token.
    expect((await gateway.openai.responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  it('answers 410 once the channel that stored it is gone, without asking another', async () => {
    const own = await stack.createChannel({
      models: [model],
      keys: [await freshAccount(stack)],
      modelMapping: { [model]: 'gpt-4o-mini' },
      priority: 10,
    });
    const response = await gateway.openai.responses.create({ model, input: 'soon gone' });
    await stack.setChannelStatus(own.id, 'disabled');
    await stack.routingSettled(own.id, false);
    const reply = await fetch(`${stack.edge.url}/v1/responses/${response.id}`, {
      headers: { authorization: `Bearer ${gateway.token.key}` },
    });
    expect(reply.status).toBe(410);
    expect(await reply.json()).toEqual({
      error: {
        message: expect.stringContaining('can no longer be reached') as string,
        type: 'invalid_request_error',
        param: 'response_id',
        code: 'response_gone',
      },
    });
  });
});
