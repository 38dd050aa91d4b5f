/**
 * The card of a tool call that waits for the reader's approval (ToolApprovalRequested), drawn in
 * its turn's answer: the tool and its input, when it expires, Approve and Decline (with an optional
 * reason). A click posts the answer; the card shows it once the log holds it (ToolApprovalDecided,
 * over the stream), so it always says what the log says, whoever or whatever answered.
 */
import { ApiError } from './api';
import { renderOpenConversation } from './conversation-view';
import { el } from './dom';
import type { Approval } from './model';
import { api, state } from './state';
import { toast } from './toast';

/** how much of the input the card shows */
const INPUT_CHARS = 1500;

/**
 * The card for `a`, asked in turn `turnId` (message `itemKey`); `open`: the turn still runs and the
 * present is shown, so the reader can answer.
 */
export function approvalCard(a: Approval, turnId: string, itemKey: string, open: boolean): HTMLElement {
  const id = `approval-${a.toolCallId}`;
  const outcome = a.decision ? (a.decision.approved ? 'approved' : 'declined') : open ? 'waiting' : 'unanswered';
  const card = el('div', {
    class: `approval ${outcome}`,
    id,
    role: 'group',
    tabindex: '-1',
    'aria-labelledby': `${id}-ask`,
  });
  card.append(
    el('p', { class: 'approval-ask', id: `${id}-ask` }, 'The agent asks to use ', el('code', {}, a.tool), ' with'),
    el('pre', { class: 'approval-input' }, pretty(a.input)),
  );
  if (a.decision) {
    card.append(el('p', { class: 'approval-outcome' }, outcomeText(a.decision)));
    return card;
  }
  if (!open) {
    const why = state.open?.past !== undefined ? 'Not answered yet at this version.' : 'Not answered: the turn ended.';
    card.append(el('p', { class: 'approval-outcome' }, why));
    return card;
  }
  if (a.expiresAt) {
    card.append(
      el(
        'p',
        { class: 'hint approval-expiry' },
        'Answer by ',
        el('time', { datetime: a.expiresAt }, when(a.expiresAt)),
        '; unanswered, it is declined.',
      ),
    );
  }
  const sending = state.approvalsSent.has(a.toolCallId);
  const approve = el('button', { type: 'button', id: `${id}-approve`, 'data-home': id, disabled: sending }, 'Approve');
  const reason = el('input', {
    id: `${id}-reason`,
    class: 'approval-reason',
    maxlength: '1000',
    placeholder: 'Why not? (optional)',
    autocomplete: 'off',
    'data-home': id,
    disabled: sending,
  });
  reason.value = state.approvalReasons.get(a.toolCallId) ?? '';
  const decline = el(
    'button',
    { type: 'button', class: 'danger', id: `${id}-decline`, 'data-home': id, disabled: sending },
    'Decline',
  );
  const answer = (approved: boolean) =>
    void send(a, turnId, itemKey, approved, approved ? undefined : reason.value.trim() || undefined);
  approve.addEventListener('click', () => answer(true));
  decline.addEventListener('click', () => answer(false));
  reason.addEventListener('input', () => state.approvalReasons.set(a.toolCallId, reason.value));
  reason.addEventListener('keydown', (e) => {
    const k = e as KeyboardEvent;
    if (k.key === 'Enter' && !k.isComposing) {
      e.preventDefault();
      answer(false);
    }
  });
  card.append(
    el(
      'div',
      { class: 'approval-actions' },
      approve,
      el('label', { for: reason.id, class: 'sr-only' }, 'Reason for declining (optional)'),
      reason,
      decline,
    ),
  );
  if (sending) card.append(el('p', { class: 'hint', role: 'status' }, 'Sending your answer…'));
  return card;
}

/** Posts the reader's answer; the card changes when ToolApprovalDecided comes over the stream. */
async function send(a: Approval, turnId: string, itemKey: string, approved: boolean, reason?: string): Promise<void> {
  const open = state.open;
  if (!open || state.approvalsSent.has(a.toolCallId)) return;
  state.approvalsSent.add(a.toolCallId);
  redraw(itemKey);
  try {
    await api.approve(open.id, turnId, { toolCallId: a.toolCallId, approved, ...(reason ? { reason } : {}) });
    state.approvalReasons.delete(a.toolCallId);
  } catch (e) {
    if (e instanceof ApiError && e.code === 'approval_decided') {
      // answered already (another tab, the expiry) or the turn ended: the log says how, the card follows it
      toast('This tool call was answered already, or its turn ended: the card shows what happened.');
      return;
    }
    state.approvalsSent.delete(a.toolCallId);
    toast(e);
    if (state.open === open) redraw(itemKey);
  }
}

function redraw(itemKey: string): void {
  state.rendered.delete(itemKey);
  renderOpenConversation();
}

function outcomeText(d: NonNullable<Approval['decision']>): string {
  if (d.by === 'timeout') return 'No answer in time: declined.';
  if (d.approved) return 'Approved.';
  return d.reason ? `Declined: ${d.reason}` : 'Declined.';
}

/** The input as indented JSON, clipped. */
function pretty(input: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(input ?? {}, null, 2) ?? String(input);
  } catch {
    text = String(input);
  }
  return text.length > INPUT_CHARS ? `${text.slice(0, INPUT_CHARS - 1)}…` : text;
}

/** "14:05", or "3 May 2026, 14:05" when not today. */
function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = d.toDateString() === new Date().toDateString();
  return d.toLocaleString(undefined, today ? { timeStyle: 'short' } : { dateStyle: 'medium', timeStyle: 'short' });
}
