import { nextDirectiveStep, toolDirectivesOf } from './tool-directives';

describe(toolDirectivesOf.name, () => {
  it('reads each CALL:<tool> and the JSON object after it, braces inside strings included', () => {
    expect(
      toolDirectivesOf(
        'Go? CALL:w__forecast {"city": "Lisbon", "note": "a } in \\"quotes\\""} then CALL:w__tide and done',
      ),
    ).toEqual([
      { name: 'w__forecast', input: { city: 'Lisbon', note: 'a } in "quotes"' } },
      { name: 'w__tide', input: {} },
    ]);
    expect(toolDirectivesOf('no directive here')).toEqual([]);
    expect(toolDirectivesOf('CALL:x {not json}')).toEqual([{ name: 'x', input: {} }]);
  });

  it('calls the next directive while tools are offered, then quotes the results', () => {
    const q = 'CALL:a {"n": 1} CALL:b';
    expect(nextDirectiveStep(q, ['a', 'b'], 0, [])).toEqual({ call: { name: 'a', input: { n: 1 } } });
    expect(nextDirectiveStep(q, ['a', 'b'], 1, ['one'])).toEqual({ call: { name: 'b', input: {} } });
    expect(nextDirectiveStep(q, ['a', 'b'], 2, ['one', 'two'])).toEqual({ text: 'The tools said: "one" "two"' });
    // the last call of a turn offers no tools: answer with what came
    expect(nextDirectiveStep(q, [], 1, ['one'])).toEqual({ text: 'The tools said: "one"' });
    expect(nextDirectiveStep(q, ['b'], 0, [])).toEqual({ text: 'I cannot call a: no tool of that name is offered.' });
    expect(nextDirectiveStep('plain question', ['a'], 0, [])).toBeNull();
  });
});
