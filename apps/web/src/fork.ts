/** Forking the open conversation at a version: the fork opens as a new conversation. */
import { refreshConversations } from './conversation-list';
import { api, state } from './state';
import { toast } from './toast';

export async function fork(version: number): Promise<void> {
  const open = state.open;
  if (!open) return;
  try {
    const c = await api.fork(open.id, version);
    toast(`Forked at version ${version}.`, 'info');
    await refreshConversations();
    location.hash = `c=${c.id}`;
  } catch (e) {
    toast(e);
  }
}
