// Qwen Code's own session loading as the oracle: the steps of each chat file as Qwen Code sees it.
//
// Usage: node qwen_chat.mjs PACKAGE_DIR FILE...
// PACKAGE_DIR is the pinned @qwen-code/qwen-code package. The script imports the chunks that
// define and export `read` (the JSONL reader `SessionService.loadSession` reads a session file
// with) and `prepareTranscriptRecords` (what its `reconstructHistory` calls: the parentUuid
// chain, fragments joined), and prints one JSON object keyed by each FILE: {sessionId, steps:
// [{name, status, command, exit, signal}]}, a step per functionCall part of an assistant
// record of the chain, joined by id with the functionResponse of a tool_result record of the
// chain (status from its toolCallResult, null when there is none). `exit` and `signal` are the
// `Exit Code: N` / `Signal: N` lines of the response text, null when absent or `(none)`.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, ...files] = process.argv.slice(2);
const chunks = join(pkg, "chunks");

function chunkDefining(definition, name) {
  const exported = new RegExp(`export \\{[^}]*\\b${name}\\b`);
  for (const file of readdirSync(chunks).sort()) {
    if (!file.endsWith(".js")) continue;
    const text = readFileSync(join(chunks, file), "utf8");
    if (text.includes(definition) && exported.test(text)) return join(chunks, file);
  }
  throw new Error(`no chunk under ${chunks} defines and exports ${name}`);
}

function line(text, label) {
  const found = new RegExp(`^${label}: (-?\\d+)\\s*$`, "m").exec(text);
  return found ? Number(found[1]) : null;
}

function responseText(response) {
  const body = response?.response ?? {};
  return typeof body.output === "string" ? body.output
    : typeof body.error === "string" ? body.error : "";
}

const { read } = await import(pathToFileURL(
  chunkDefining("async function read(filePath, options = {})", "read")).href);
const { prepareTranscriptRecords } = await import(pathToFileURL(
  chunkDefining("function prepareTranscriptRecords(", "prepareTranscriptRecords")).href);

const out = {};
for (const file of files) {
  const prepared = prepareTranscriptRecords(await read(file));
  const results = new Map();
  for (const record of prepared.records) {
    if (record.type !== "tool_result") continue;
    for (const part of record.message?.parts ?? []) {
      const response = part.functionResponse;
      if (response?.id) results.set(response.id, { response, status: record.toolCallResult?.status ?? null });
    }
  }
  const steps = [];
  for (const record of prepared.records) {
    if (record.type !== "assistant") continue;
    for (const part of record.message?.parts ?? []) {
      const call = part.functionCall;
      if (!call) continue;
      const result = results.get(call.id);
      const text = result ? responseText(result.response) : "";
      steps.push({
        name: call.name ?? null,
        status: result ? result.status : null,
        command: typeof call.args?.command === "string" ? call.args.command : null,
        exit: line(text, "Exit Code"),
        signal: line(text, "Signal"),
      });
    }
  }
  out[file] = { sessionId: prepared.sessionId ?? null, steps };
}
process.stdout.write(JSON.stringify(out));
