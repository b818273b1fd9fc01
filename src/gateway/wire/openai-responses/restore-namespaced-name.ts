// A namespace tool's call in the bridged answer: the flattened chat name back to the name and namespace the
// client declared (decode-responses-tools.ts flattened them); any other name is left as it is.
import type { NamespacedNames, ResponsesCustomCallItem, ResponsesFunctionCallItem } from './responses-types.ts';

/** Sets `item`'s name (and namespace, for a namespaced tool) from the chat name `name`. */
export function restoreNamespacedName(item: ResponsesFunctionCallItem | ResponsesCustomCallItem, name: string, namespaced: NamespacedNames | undefined): void {
  const own = namespaced?.get(name);
  if (own === undefined) {
    item.name = name;
    return;
  }
  item.namespace = own.namespace;
  item.name = own.name;
}
