/**
 * The planning of the signed_requests storyboard's vector steps (src/plan/signing-vectors.ts), on storyboards and
 * vectors built here so each case is exact: which storyboards get synthesized steps, what each synthesized step holds
 * (and what it must not), which phases are left as written, and the one failing step a phase gets when its vectors
 * could not be read. The corpus file itself, compiled, is test/compile/signed-requests.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Phase, Step, Storyboard } from '../../src/model/storyboard.js';
import { REQUEST_SIGNING_PROBE_TASK } from '../../src/model/runner-tasks.js';
import {
  isVectorErrorStep,
  isVectorStep,
  synthesizesVectorSteps,
  withVectorSteps,
  type SigningVectorSource,
} from '../../src/plan/signing-vectors.js';
import type { SigningVector } from '../../src/signing/vectors.js';

const DIR = '/corpus/test-vectors/request-signing';

function phase(id: string, line: number, steps: Step[] = []): Phase {
  return { id, steps, loc: { line, column: 5 } };
}

function step(id: string): Step {
  return { id, task: 'get_adcp_capabilities', loc: { line: 99, column: 9 } } as Step;
}

function storyboard(id: string, phases: Phase[]): Storyboard {
  return { id, title: id, phases, loc: { line: 1, column: 1 }, file: `/corpus/${id}.yaml` };
}

/** The YAML's shape: a capabilities phase with steps, then the two empty vector phases. */
const signedRequests = () =>
  storyboard('signed_requests', [
    phase('capabilities', 10, [step('get_capabilities')]),
    phase('positive_vectors', 20),
    phase('negative_vectors', 30),
  ]);

function vector(
  polarity: 'positive' | 'negative',
  id: string,
  name: string,
  over: Partial<SigningVector> = {},
): SigningVector {
  return {
    kind: 'request-signing',
    id,
    polarity,
    file: `${DIR}/${polarity}/${id}.json`,
    name,
    referenceNow: 1_700_000_000,
    request: {} as SigningVector['request'],
    jwks: [],
    expectedOutcome:
      polarity === 'positive' ? { success: true } : { success: false, errorCode: 'request_signature_tag_invalid' },
    raw: {},
    ...over,
  };
}

const read = (): SigningVectorSource => ({
  dir: DIR,
  vectors: {
    positive: [vector('positive', '001-basic-post', 'Basic POST')],
    negative: [
      vector('negative', '002-wrong-tag', 'Wrong tag'),
      vector('negative', '016-replayed-nonce', 'Replayed nonce', {
        expectedOutcome: { success: false, errorCode: 'request_signature_replayed' },
        requiresContract: 'replay_window',
      }),
    ],
  } as never,
});

describe('which storyboards get vector steps', () => {
  it('the signed_requests storyboard with empty vector phases does', () => {
    expect(synthesizesVectorSteps(signedRequests())).toBe(true);
    // One empty vector phase is enough.
    expect(
      synthesizesVectorSteps(
        storyboard('signed_requests', [
          phase('positive_vectors', 20, [step('written')]),
          phase('negative_vectors', 30),
        ]),
      ),
    ).toBe(true);
  });

  it('another storyboard does not, even with phases named like the vector phases and empty', () => {
    const other = storyboard('webhook_signing', [phase('positive_vectors', 20), phase('negative_vectors', 30)]);
    expect(synthesizesVectorSteps(other)).toBe(false);
    expect(withVectorSteps(other, read())).toBe(other.phases);
    expect(withVectorSteps(other, read()).map((p) => p.steps)).toEqual([[], []]);
  });

  it('signed_requests does not when its vector phases already have steps, though another phase is empty', () => {
    const written = storyboard('signed_requests', [
      phase('setup', 5),
      phase('positive_vectors', 20, [step('a')]),
      phase('negative_vectors', 30, [step('b')]),
    ]);
    expect(synthesizesVectorSteps(written)).toBe(false);
    expect(withVectorSteps(written, read())).toBe(written.phases);
  });
});

describe('the synthesized vector steps', () => {
  it('are one probe step per vector, ids and titles from the vector, at the phase line, each graded on its own', () => {
    const [, positive] = withVectorSteps(signedRequests(), read());
    expect(positive).toStrictEqual({
      id: 'positive_vectors',
      loc: { line: 20, column: 5 },
      steps: [
        {
          id: 'positive-001-basic-post',
          title: '001-basic-post: Basic POST',
          task: REQUEST_SIGNING_PROBE_TASK,
          stateful: false,
          validations: [],
          vector: { polarity: 'positive', id: '001-basic-post', name: 'Basic POST', dir: DIR },
          loc: { line: 20, column: 5 },
        },
      ],
    });
    expect(isVectorStep(positive!.steps[0]!)).toBe(true);
  });

  it('carry the expected error code only for negative vectors, and a test-kit contract only when the vector needs one', () => {
    const [, positive, negative] = withVectorSteps(signedRequests(), read());
    const refs = [...positive!.steps, ...negative!.steps].map((s) => (isVectorStep(s) ? s.vector : undefined));
    expect(refs).toStrictEqual([
      { polarity: 'positive', id: '001-basic-post', name: 'Basic POST', dir: DIR },
      {
        polarity: 'negative',
        id: '002-wrong-tag',
        name: 'Wrong tag',
        error_code: 'request_signature_tag_invalid',
        dir: DIR,
      },
      {
        polarity: 'negative',
        id: '016-replayed-nonce',
        name: 'Replayed nonce',
        error_code: 'request_signature_replayed',
        requires_contract: 'replay_window',
        dir: DIR,
      },
    ]);
    expect(negative!.steps.map((s) => [s.id, s.stateful, s.validations])).toStrictEqual([
      ['negative-002-wrong-tag', false, []],
      ['negative-016-replayed-nonce', false, []],
    ]);
  });

  it('fill only the empty vector phases: phases with steps, and the other phases, stay as written', () => {
    const capabilities = phase('capabilities', 10, [step('get_capabilities')]);
    const empty = phase('notes', 15);
    const writtenPositive = phase('positive_vectors', 20, [step('hand-written')]);
    const negative = phase('negative_vectors', 30);
    const phases = withVectorSteps(
      storyboard('signed_requests', [capabilities, empty, writtenPositive, negative]),
      read(),
    );
    expect(phases.slice(0, 3)).toEqual([capabilities, empty, writtenPositive]);
    expect(phases[0]).toBe(capabilities);
    expect(phases[1]).toBe(empty);
    expect(phases[2]).toBe(writtenPositive);
    expect(phases[3]!.steps.map((s) => s.id)).toEqual(['negative-002-wrong-tag', 'negative-016-replayed-nonce']);
  });
});

describe('when the vectors could not be read', () => {
  it('each vector phase gets one step that fails with the reason, never an empty phase that reads as a pass', () => {
    const phases = withVectorSteps(signedRequests(), { problem: 'the folder does not exist' });
    expect(phases[0]!.steps.map((s) => s.id)).toEqual(['get_capabilities']);
    expect(phases.slice(1)).toStrictEqual(
      (['positive', 'negative'] as const).map((polarity, i) => ({
        id: `${polarity}_vectors`,
        loc: { line: 20 + i * 10, column: 5 },
        steps: [
          {
            id: 'vectors_unavailable',
            title: `${polarity} conformance vectors`,
            task: REQUEST_SIGNING_PROBE_TASK,
            stateful: false,
            validations: [],
            vector_error:
              "the runner synthesizes this phase's steps from the conformance vectors, and the folder does not exist",
            loc: { line: 20 + i * 10, column: 5 },
          },
        ],
      })),
    );
    const unavailable = phases[1]!.steps[0]!;
    expect(isVectorErrorStep(unavailable)).toBe(true);
    expect(isVectorStep(unavailable)).toBe(false);
  });
});

describe('telling a synthesized vector step from a written one', () => {
  it('only a step carrying a vector reference is a vector step', () => {
    expect(isVectorStep(step('plain'))).toBe(false);
    // A written step may carry keys of its own: a `vector` that is no reference (null, a string) is not one.
    expect(isVectorStep({ ...step('null'), vector: null } as unknown as Step)).toBe(false);
    expect(isVectorStep({ ...step('named'), vector: '001-basic-post' } as unknown as Step)).toBe(false);
    expect(isVectorErrorStep(step('plain'))).toBe(false);
  });
});
