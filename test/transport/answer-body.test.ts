/**
 * The JSON-RPC answer in an HTTP body (src/transport/answer-body.ts), used for
 * the raw signed_requests answers and by the matchers: a JSON body as it is;
 * in a server-sent-events body, the event that is the response — not the first
 * `data:` line (a notification may come first) nor the last (one may follow).
 */
import { describe, expect, it } from 'vitest';
import { jsonRpcAnswerIn } from '../../src/transport/answer-body.js';
import { parseAnswerBody } from '../../src/transport/raw-http.js';

const SSE = 'text/event-stream';
const event = (data: unknown) => `event: message\ndata: ${JSON.stringify(data)}\n\n`;
const response = { jsonrpc: '2.0', id: 7, result: { structuredContent: { ok: true } } };
const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };

describe('jsonRpcAnswerIn', () => {
  it('a JSON body is the answer, whatever it holds', () => {
    expect(jsonRpcAnswerIn(JSON.stringify(response), { contentType: 'application/json' })).toEqual(response);
    expect(jsonRpcAnswerIn('[1,2]')).toEqual([1, 2]);
    expect(jsonRpcAnswerIn('null')).toBeNull();
  });

  it('in an event stream, the response — with notifications before it or after it', () => {
    expect(jsonRpcAnswerIn(event(progress) + event(response), { contentType: SSE })).toEqual(response);
    expect(jsonRpcAnswerIn(event(response) + event(progress), { contentType: SSE })).toEqual(response);
  });

  it('the response to the request asked about, when its id is given', () => {
    const other = { ...response, id: 6, result: {} };
    expect(jsonRpcAnswerIn(event(response) + event(other), { contentType: SSE, id: 7 })).toEqual(response);
    expect(jsonRpcAnswerIn(event(response) + event(other), { contentType: SSE })).toEqual(other);
  });

  it('an error response is an answer too', () => {
    const error = { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'bad' } };
    expect(jsonRpcAnswerIn(event(progress) + event(error), { contentType: SSE })).toEqual(error);
  });

  it('reads events as the SSE format defines them: data over several lines, CRLF, no closing blank line', () => {
    const json = JSON.stringify(response, null, 2);
    const multiLine = `event: message\n${json
      .split('\n')
      .map((line) => `data: ${line}`)
      .join('\n')}\n\n`;
    expect(jsonRpcAnswerIn(multiLine, { contentType: SSE })).toEqual(response);
    expect(jsonRpcAnswerIn(event(response).replace(/\n/g, '\r\n'), { contentType: SSE })).toEqual(response);
    expect(jsonRpcAnswerIn(`data: ${JSON.stringify(response)}`, { contentType: SSE })).toEqual(response);
  });

  it('without a response, the last JSON event; without JSON, nothing', () => {
    expect(jsonRpcAnswerIn(event({ a: 1 }) + event({ b: 2 }), { contentType: SSE })).toEqual({ b: 2 });
    expect(jsonRpcAnswerIn('data: not json\n\n', { contentType: SSE })).toBeUndefined();
    expect(jsonRpcAnswerIn('   ')).toBeUndefined();
  });

  it('an event stream sent without its content type is still read', () => {
    expect(jsonRpcAnswerIn(event(progress) + event(response))).toEqual(response);
  });
});

describe('parseAnswerBody (raw answers)', () => {
  it('keeps a body that holds no JSON as text, and an empty one as nothing', () => {
    expect(parseAnswerBody('<html>401</html>', 'text/html')).toBe('<html>401</html>');
    expect(parseAnswerBody('', SSE)).toBeUndefined();
    expect(parseAnswerBody(event(progress) + event(response), SSE)).toEqual(response);
  });
});
