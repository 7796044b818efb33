// Gemini CLI's own chat loading as the oracle: the steps of each chat file as Gemini CLI sees it.
//
// Usage: node gemini_chat.mjs BUNDLE_DIR FILE...
// BUNDLE_DIR is the pinned @google/gemini-cli package's bundle/ folder. The script imports the
// bundle chunk that defines and exports `loadConversationRecord` (what `--resume` and
// `/resume` read a session file with; it also reads the older one-document .json chats) and
// prints one JSON object keyed by each FILE: null when Gemini CLI loads nothing, else
// {sessionId, steps: [{name, status, command, exit, signal}]}, a step per entry of a model
// message's toolCalls, in the order of the loaded messages. `exit` and `signal` are the
// `Exit Code: N` / `Signal: N` lines of the tool's response text, null when absent.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [bundle, ...files] = process.argv.slice(2);

function loader() {
  for (const name of readdirSync(bundle).sort()) {
    if (!name.endsWith(".js")) continue;
    const text = readFileSync(join(bundle, name), "utf8");
    if (text.includes("async function loadConversationRecord(")
        && /export \{[^}]*\bloadConversationRecord\b/.test(text)) {
      return join(bundle, name);
    }
  }
  throw new Error(`no bundle chunk under ${bundle} exports loadConversationRecord`);
}

function responseText(call) {
  const result = call.result;
  if (typeof result === "string") return result;
  const parts = Array.isArray(result) ? result : result ? [result] : [];
  return parts.map((part) => {
    const response = part?.functionResponse?.response ?? {};
    return typeof response.output === "string" ? response.output
      : typeof response.error === "string" ? response.error : "";
  }).join("\n");
}

function line(text, label) {
  const found = new RegExp(`^${label}: (-?\\d+)\\s*$`, "m").exec(text);
  return found ? Number(found[1]) : null;
}

const { loadConversationRecord } = await import(pathToFileURL(loader()).href);
const out = {};
for (const file of files) {
  const record = await loadConversationRecord(file);
  if (record === null || record === undefined) {
    out[file] = null;
    continue;
  }
  const steps = [];
  for (const message of record.messages ?? []) {
    if (message.type !== "gemini" || !Array.isArray(message.toolCalls)) continue;
    for (const call of message.toolCalls) {
      const text = responseText(call);
      steps.push({
        name: call.name ?? null,
        status: call.status ?? null,
        command: typeof call.args?.command === "string" ? call.args.command : null,
        exit: line(text, "Exit Code"),
        signal: line(text, "Signal"),
      });
    }
  }
  out[file] = { sessionId: record.sessionId ?? null, steps };
}
process.stdout.write(JSON.stringify(out));
