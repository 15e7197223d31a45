// The model files of the latency run (tests/e2e/latency.test.mjs), written
// deterministically: real heads (every metadata pair, every tensor info or
// header entry), then the file truncated to its full length, so the
// payloads are sparse and cost no disk.
//
//   node tests/e2e/latency-files.mjs [DIR]   (default target/e2e-files/latency)
//
// - llama2-7b.gguf: GGUF v3, Llama-2-7B's llama keys, a SentencePiece
//   vocabulary of 32,000 tokens with scores and token types, its 291
//   tensors in a Q4_K_M mix (head about 0.7 MB);
// - qwen3-8b.gguf: Qwen3-8B's keys, a byte-level BPE vocabulary of
//   151,936 tokens, 151,387 merges and a chat template, 399 tensors;
// - gpt-oss-20b.gguf: gpt-oss-20b's keys, 201,088 tokens, 446,189 merges,
//   459 tensors (MXFP4 experts), a head of about 13 MiB;
// - moe-20k.safetensors: a 128-expert MoE of 51 layers, 20,046 tensors
//   named as transformers names them, BF16 with F32 norms (header about
//   2.4 MB), laid out as the safetensors writer does.
//
// `latencyFiles(dir)` writes what is missing or stale (the head on disk is
// compared with the one generated) and returns each file's expected
// facts, which the run compares every tool's answer with.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** ggml types used here: id, elements per block, bytes per block, Kiln's name. */
export const GGML = {
  F32: { id: 0, block: 1, bytes: 4, kiln: 'f32' },
  F16: { id: 1, block: 1, bytes: 2, kiln: 'f16' },
  Q8_0: { id: 8, block: 32, bytes: 34, kiln: 'Q8_0' },
  Q4_K: { id: 12, block: 256, bytes: 144, kiln: 'Q4_K' },
  Q6_K: { id: 14, block: 256, bytes: 210, kiln: 'Q6_K' },
  MXFP4: { id: 39, block: 32, bytes: 17, kiln: 'MXFP4' },
};
/** GGUF metadata value types. */
export const GV = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STR: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 };

// ------------------------------------------------------------ determinism

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const LETTERS = 'etaoinshrdlcumwfgypbvkjxqz';
const CJK = '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域读';

// byte-level BPE's printable alphabet (GPT-2's bytes_to_unicode)
const BYTE_CHARS = (() => {
  const bs = [];
  for (let c = 33; c <= 126; c++) bs.push(c);
  for (let c = 161; c <= 172; c++) bs.push(c);
  for (let c = 174; c <= 255; c++) bs.push(c);
  const chars = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) chars[b] = String.fromCodePoint(bs.includes(b) ? b : 256 + n++);
  return chars;
})();

function word(r, meanLetters) {
  // A length of 1 and up with mean about meanLetters, letters skewed to
  // the frequent ones.
  let n = 1;
  while (r() < 1 - 1 / meanLetters && n < 16) n++;
  let s = '';
  for (let i = 0; i < n; i++) s += LETTERS[Math.floor(r() * r() * LETTERS.length)];
  return s;
}

/** A SentencePiece vocabulary as llama's: <unk>, <s>, </s>, the 256 byte tokens, then pieces. */
function spmVocab(count, seed) {
  const r = rng(seed);
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let b = 0; b < 256; b++) { tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`); types.push(6); }
  const seen = new Set(tokens);
  while (tokens.length < count) {
    const t = (r() < 0.65 ? '\u2581' : '') + (r() < 0.03 ? CJK[Math.floor(r() * CJK.length)] : word(r, 3.4));
    if (seen.has(t)) continue;
    seen.add(t); tokens.push(t); types.push(1);
  }
  const scores = tokens.map((_, i) => (i < 259 ? 0 : -(i - 259)));
  return { tokens, types, scores };
}

/** A byte-level BPE vocabulary (Qwen's, gpt-oss's): the 256 byte characters, merged tokens, then special tokens; and merges. */
function bpeVocab({ count, regular, specials, merges, seed, meanLetters, cjk }) {
  const r = rng(seed);
  const tokens = [...BYTE_CHARS];
  const seen = new Set(tokens);
  while (tokens.length < regular) {
    let t;
    const u = r();
    if (u < cjk) { t = ''; const n = 1 + Math.floor(r() * 3); for (let i = 0; i < n; i++) t += CJK[Math.floor(r() * CJK.length)]; }
    else t = (u < 0.55 ? '\u0120' : u < 0.57 ? '\u010a' : '') + word(r, meanLetters);
    if (seen.has(t)) continue;
    seen.add(t); tokens.push(t);
  }
  const types = tokens.map(() => 1);
  for (let i = 0; tokens.length < count; i++) {
    tokens.push(i < specials.length ? specials[i] : `<|reserved_special_token_${i}|>`);
    types.push(i < specials.length ? 3 : 4);
  }
  // Each merge splits a merged token in two (its parts as the byte
  // alphabet spells them); more merges than tokens split them again
  // elsewhere, as real merge lists hold intermediate pieces.
  const list = [];
  for (let pass = 0; list.length < merges; pass++) {
    for (let i = 256; i < regular && list.length < merges; i++) {
      const chars = [...tokens[i]];
      if (chars.length < 2) { list.push(`${tokens[i]} ${BYTE_CHARS[i % 256]}`); continue; }
      const k = 1 + ((i * 7 + pass * 3) % (chars.length - 1));
      list.push(`${chars.slice(0, k).join('')} ${chars.slice(k).join('')}`);
    }
  }
  return { tokens, types, merges: list };
}

function template(length, seed) {
  const r = rng(seed);
  let s = "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}{%- endif %}";
  while (s.length < length) s += `{%- for ${word(r, 5)} in ${word(r, 6)} %}{{- '<|${word(r, 4)}|>' + ${word(r, 7)}['${word(r, 5)}'] }}{%- endfor %}\n`;
  return s.slice(0, length);
}

// ------------------------------------------------------------ GGUF

/** A little-endian byte writer that grows. */
class Writer {
  constructor() { this.buf = Buffer.alloc(1 << 20); this.at = 0; }
  room(n) {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const next = Buffer.alloc(size);
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
  u32(v) { this.room(4); this.buf.writeUInt32LE(v, this.at); this.at += 4; }
  i32(v) { this.room(4); this.buf.writeInt32LE(v, this.at); this.at += 4; }
  u64(v) { this.room(8); this.buf.writeBigUInt64LE(BigInt(v), this.at); this.at += 8; }
  f32(v) { this.room(4); this.buf.writeFloatLE(v, this.at); this.at += 4; }
  u8(v) { this.room(1); this.buf[this.at++] = v; }
  str(s) {
    const n = Buffer.byteLength(s);
    this.u64(n); this.room(n); this.buf.write(s, this.at, 'utf8'); this.at += n;
  }
  bytes() { return this.buf.subarray(0, this.at); }
}

const SCALAR_WRITE = { [GV.U32]: 'u32', [GV.I32]: 'i32', [GV.F32]: 'f32', [GV.U64]: 'u64', [GV.STR]: 'str', [GV.BOOL]: 'u8', [GV.U8]: 'u8' };

/** Kiln's type text of a GGUF value type (spec/conversion.md 3.2). */
export const KILN_TYPE = { [GV.U8]: 'u8', [GV.I8]: 'i8', [GV.U16]: 'u16', [GV.I16]: 'i16', [GV.U32]: 'u32', [GV.I32]: 'i32', [GV.F32]: 'f32', [GV.BOOL]: 'bool', [GV.STR]: 'str', [GV.U64]: 'u64', [GV.I64]: 'i64', [GV.F64]: 'f64' };

/**
 * A GGUF v3 head and its file length: `kv` is [key, type, value] (an
 * array value as { of, items }), `tensors` is [name, ggml type, ne
 * (innermost first)]. Offsets are GGUF's canonical ones (alignment 32).
 */
function gguf(kv, tensors) {
  const w = new Writer();
  w.buf.write('GGUF', 0, 'latin1'); w.at = 4;
  w.u32(3); w.u64(tensors.length); w.u64(kv.length);
  for (const [key, type, value] of kv) {
    w.str(key); w.u32(type);
    if (type === GV.ARRAY) {
      w.u32(value.of); w.u64(value.items.length);
      const put = SCALAR_WRITE[value.of];
      for (const x of value.items) w[put](value.of === GV.BOOL ? Number(x) : x);
    } else w[SCALAR_WRITE[type]](type === GV.BOOL ? Number(value) : value);
  }
  const align = 32;
  const pad = (n) => Math.ceil(n / align) * align;
  let offset = 0;
  const infos = tensors.map(([name, type, ne]) => {
    const rows = ne.slice(1).reduce((a, b) => a * b, 1);
    if (ne[0] % type.block) throw new Error(`${name}: ne0 ${ne[0]} is not a whole number of ${type.kiln} blocks`);
    const bytes = (ne[0] / type.block) * type.bytes * rows;
    const info = { name, type, ne, offset, bytes };
    offset += pad(bytes);
    return info;
  });
  for (const t of infos) {
    w.str(t.name); w.u32(t.ne.length);
    for (const d of t.ne) w.u64(d);
    w.u32(t.type.id); w.u64(t.offset);
  }
  const headEnd = w.at;
  const dataStart = pad(headEnd);
  w.room(dataStart - headEnd); w.at = dataStart; // zero padding (the buffer is zeroed)
  return {
    head: Buffer.from(w.bytes()), length: dataStart + offset, dataStart,
    tensors: infos.map((t) => ({
      name: t.name, ggml: t.type.id, dtype: t.type.kiln, ne: t.ne, shape: [...t.ne].reverse(),
      offset: t.offset, byteOffset: dataStart + t.offset, byteLength: t.bytes,
    })),
    metadata: kv.map(([key, type, value]) => ({
      key, type, of: type === GV.ARRAY ? value.of : undefined,
      kilnType: type === GV.ARRAY ? `list<${KILN_TYPE[value.of]}>` : KILN_TYPE[type],
      value: type === GV.ARRAY ? undefined : value, items: type === GV.ARRAY ? value.items : undefined,
    })),
  };
}

const arr = (of, items) => ({ of, items });
// llama.cpp's Q4_K_M rule for attn_v and ffn_down: Q6_K in the first and
// last eighth of the layers and every third layer between.
const moreBits = (i, n) => i < n / 8 || i >= (7 * n) / 8 || (i - Math.floor(n / 8)) % 3 === 2;

function llama2() {
  const { tokens, types, scores } = spmVocab(32000, 7);
  const E = 4096, F = 11008, L = 32, V = 32000;
  const kv = [
    ['general.architecture', GV.STR, 'llama'],
    ['general.name', GV.STR, 'LLaMA v2'],
    ['llama.context_length', GV.U32, 4096],
    ['llama.embedding_length', GV.U32, E],
    ['llama.block_count', GV.U32, L],
    ['llama.feed_forward_length', GV.U32, F],
    ['llama.rope.dimension_count', GV.U32, 128],
    ['llama.attention.head_count', GV.U32, 32],
    ['llama.attention.head_count_kv', GV.U32, 32],
    ['llama.attention.layer_norm_rms_epsilon', GV.F32, 1e-5],
    ['general.file_type', GV.U32, 15],
    ['tokenizer.ggml.model', GV.STR, 'llama'],
    ['tokenizer.ggml.tokens', GV.ARRAY, arr(GV.STR, tokens)],
    ['tokenizer.ggml.scores', GV.ARRAY, arr(GV.F32, scores)],
    ['tokenizer.ggml.token_type', GV.ARRAY, arr(GV.I32, types)],
    ['tokenizer.ggml.bos_token_id', GV.U32, 1],
    ['tokenizer.ggml.eos_token_id', GV.U32, 2],
    ['tokenizer.ggml.unknown_token_id', GV.U32, 0],
    ['general.quantization_version', GV.U32, 2],
  ];
  const { F32, Q4_K, Q6_K } = GGML;
  const t = [['token_embd.weight', Q4_K, [E, V]]];
  for (let i = 0; i < L; i++) {
    const b = `blk.${i}.`;
    const hi = moreBits(i, L) ? Q6_K : Q4_K;
    t.push([`${b}attn_q.weight`, Q4_K, [E, E]], [`${b}attn_k.weight`, Q4_K, [E, E]], [`${b}attn_v.weight`, hi, [E, E]],
      [`${b}attn_output.weight`, Q4_K, [E, E]], [`${b}ffn_gate.weight`, Q4_K, [E, F]], [`${b}ffn_down.weight`, hi, [F, E]],
      [`${b}ffn_up.weight`, Q4_K, [E, F]], [`${b}attn_norm.weight`, F32, [E]], [`${b}ffn_norm.weight`, F32, [E]]);
  }
  t.push(['output_norm.weight', F32, [E]], ['output.weight', Q6_K, [E, V]]);
  return gguf(kv, t);
}

const QWEN_SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>', '<|object_ref_end|>', '<|box_start|>', '<|box_end|>',
  '<|quad_start|>', '<|quad_end|>', '<|vision_start|>', '<|vision_end|>', '<|vision_pad|>', '<|image_pad|>', '<|video_pad|>', '<tool_call>',
  '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>', '<|repo_name|>', '<|file_sep|>', '<tool_response>',
  '</tool_response>', '<think>', '</think>'];

function qwen3() {
  const V = 151936, E = 4096, F = 12288, L = 36, KV = 1024;
  const { tokens, types, merges } = bpeVocab({ count: V, regular: 151643, specials: QWEN_SPECIALS, merges: 151387, seed: 11, meanLetters: 5.2, cjk: 0.08 });
  const kv = [
    ['general.architecture', GV.STR, 'qwen3'],
    ['general.type', GV.STR, 'model'],
    ['general.name', GV.STR, 'Qwen3 8B'],
    ['general.basename', GV.STR, 'Qwen3'],
    ['general.size_label', GV.STR, '8B'],
    ['general.license', GV.STR, 'apache-2.0'],
    ['qwen3.block_count', GV.U32, L],
    ['qwen3.context_length', GV.U32, 40960],
    ['qwen3.embedding_length', GV.U32, E],
    ['qwen3.feed_forward_length', GV.U32, F],
    ['qwen3.attention.head_count', GV.U32, 32],
    ['qwen3.attention.head_count_kv', GV.U32, 8],
    ['qwen3.rope.freq_base', GV.F32, 1000000],
    ['qwen3.attention.layer_norm_rms_epsilon', GV.F32, 1e-6],
    ['qwen3.attention.key_length', GV.U32, 128],
    ['qwen3.attention.value_length', GV.U32, 128],
    ['tokenizer.ggml.model', GV.STR, 'gpt2'],
    ['tokenizer.ggml.pre', GV.STR, 'qwen2'],
    ['tokenizer.ggml.tokens', GV.ARRAY, arr(GV.STR, tokens)],
    ['tokenizer.ggml.token_type', GV.ARRAY, arr(GV.I32, types)],
    ['tokenizer.ggml.merges', GV.ARRAY, arr(GV.STR, merges)],
    ['tokenizer.ggml.eos_token_id', GV.U32, 151645],
    ['tokenizer.ggml.padding_token_id', GV.U32, 151643],
    ['tokenizer.ggml.bos_token_id', GV.U32, 151643],
    ['tokenizer.ggml.add_bos_token', GV.BOOL, false],
    ['tokenizer.chat_template', GV.STR, template(4168, 12)],
    ['general.quantization_version', GV.U32, 2],
    ['general.file_type', GV.U32, 15],
  ];
  const { F32, Q4_K, Q6_K } = GGML;
  const t = [['output.weight', Q6_K, [E, V]], ['output_norm.weight', F32, [E]], ['token_embd.weight', Q4_K, [E, V]]];
  for (let i = 0; i < L; i++) {
    const b = `blk.${i}.`;
    const hi = moreBits(i, L) ? Q6_K : Q4_K;
    t.push([`${b}attn_k.weight`, Q4_K, [E, KV]], [`${b}attn_k_norm.weight`, F32, [128]], [`${b}attn_norm.weight`, F32, [E]],
      [`${b}attn_output.weight`, Q4_K, [E, E]], [`${b}attn_q.weight`, Q4_K, [E, E]], [`${b}attn_q_norm.weight`, F32, [128]],
      [`${b}attn_v.weight`, hi, [E, KV]], [`${b}ffn_down.weight`, hi, [F, E]], [`${b}ffn_gate.weight`, Q4_K, [E, F]],
      [`${b}ffn_norm.weight`, F32, [E]], [`${b}ffn_up.weight`, Q4_K, [E, F]]);
  }
  return gguf(kv, t);
}

function gptOss() {
  const V = 201088, E = 2880, L = 24, X = 32, Q = 4096, KV = 512;
  const specials = ['<|startoftext|>', '<|endoftext|>', '<|reserved_200000|>', '<|reserved_200001|>', '<|return|>', '<|constrain|>',
    '<|reserved_200004|>', '<|channel|>', '<|start|>', '<|end|>', '<|message|>', '<|reserved_200009|>', '<|reserved_200010|>',
    '<|reserved_200011|>', '<|call|>'];
  const { tokens, types, merges } = bpeVocab({ count: V, regular: 199998, specials, merges: 446189, seed: 13, meanLetters: 7.5, cjk: 0.2 });
  const kv = [
    ['general.architecture', GV.STR, 'gpt-oss'],
    ['general.type', GV.STR, 'model'],
    ['general.name', GV.STR, 'Gpt Oss 20b'],
    ['general.basename', GV.STR, 'gpt-oss'],
    ['general.size_label', GV.STR, '20B'],
    ['general.license', GV.STR, 'apache-2.0'],
    ['gpt-oss.block_count', GV.U32, L],
    ['gpt-oss.context_length', GV.U32, 131072],
    ['gpt-oss.embedding_length', GV.U32, E],
    ['gpt-oss.feed_forward_length', GV.U32, E],
    ['gpt-oss.attention.head_count', GV.U32, 64],
    ['gpt-oss.attention.head_count_kv', GV.U32, 8],
    ['gpt-oss.rope.freq_base', GV.F32, 150000],
    ['gpt-oss.attention.layer_norm_rms_epsilon', GV.F32, 1e-5],
    ['gpt-oss.expert_count', GV.U32, X],
    ['gpt-oss.expert_used_count', GV.U32, 4],
    ['gpt-oss.attention.key_length', GV.U32, 64],
    ['gpt-oss.attention.value_length', GV.U32, 64],
    ['gpt-oss.attention.sliding_window', GV.U32, 128],
    ['gpt-oss.expert_feed_forward_length', GV.U32, E],
    ['gpt-oss.rope.scaling.type', GV.STR, 'yarn'],
    ['gpt-oss.rope.scaling.factor', GV.F32, 32],
    ['gpt-oss.rope.scaling.original_context_length', GV.U32, 4096],
    ['general.file_type', GV.U32, 38],
    ['general.quantization_version', GV.U32, 2],
    ['tokenizer.ggml.model', GV.STR, 'gpt2'],
    ['tokenizer.ggml.pre', GV.STR, 'gpt-4o'],
    ['tokenizer.ggml.tokens', GV.ARRAY, arr(GV.STR, tokens)],
    ['tokenizer.ggml.token_type', GV.ARRAY, arr(GV.I32, types)],
    ['tokenizer.ggml.merges', GV.ARRAY, arr(GV.STR, merges)],
    ['tokenizer.ggml.bos_token_id', GV.U32, 199998],
    ['tokenizer.ggml.eos_token_id', GV.U32, 200002],
    ['tokenizer.ggml.padding_token_id', GV.U32, 199999],
    ['tokenizer.chat_template', GV.STR, template(16717, 14)],
  ];
  const { F32, Q8_0, MXFP4 } = GGML;
  const t = [['output.weight', Q8_0, [E, V]], ['output_norm.weight', F32, [E]], ['token_embd.weight', Q8_0, [E, V]]];
  for (let i = 0; i < L; i++) {
    const b = `blk.${i}.`;
    t.push([`${b}attn_norm.weight`, F32, [E]], [`${b}attn_out.bias`, F32, [E]], [`${b}attn_out.weight`, Q8_0, [Q, E]],
      [`${b}attn_k.bias`, F32, [KV]], [`${b}attn_k.weight`, Q8_0, [E, KV]], [`${b}attn_q.bias`, F32, [Q]],
      [`${b}attn_q.weight`, Q8_0, [E, Q]], [`${b}attn_v.bias`, F32, [KV]], [`${b}attn_v.weight`, Q8_0, [E, KV]],
      [`${b}attn_sinks.weight`, F32, [64]], [`${b}ffn_down_exps.bias`, F32, [E, X]], [`${b}ffn_down_exps.weight`, MXFP4, [E, E, X]],
      [`${b}ffn_gate_exps.bias`, F32, [E, X]], [`${b}ffn_gate_exps.weight`, MXFP4, [E, E, X]], [`${b}ffn_gate_inp.bias`, F32, [X]],
      [`${b}ffn_gate_inp.weight`, F32, [E, X]], [`${b}ffn_up_exps.bias`, F32, [E, X]], [`${b}ffn_up_exps.weight`, MXFP4, [E, E, X]],
      [`${b}post_attention_norm.weight`, F32, [E]]);
  }
  return gguf(kv, t);
}

// ------------------------------------------------------------ safetensors

const ST_BYTES = { BF16: 2, F32: 4 };
// The safetensors writer's order: dtype descending (F32 before BF16), then name.
const ST_DTYPE_RANK = { F32: 15, BF16: 12 };

function moe() {
  const L = 51, X = 128, E = 2048, I = 768, Q = 4096, KV = 512, V = 151936;
  const list = [['model.embed_tokens.weight', 'BF16', [V, E]], ['model.norm.weight', 'F32', [E]], ['lm_head.weight', 'BF16', [V, E]]];
  for (let i = 0; i < L; i++) {
    const p = `model.layers.${i}.`;
    list.push([`${p}input_layernorm.weight`, 'F32', [E]], [`${p}post_attention_layernorm.weight`, 'F32', [E]],
      [`${p}self_attn.q_proj.weight`, 'BF16', [Q, E]], [`${p}self_attn.k_proj.weight`, 'BF16', [KV, E]],
      [`${p}self_attn.v_proj.weight`, 'BF16', [KV, E]], [`${p}self_attn.o_proj.weight`, 'BF16', [E, Q]],
      [`${p}self_attn.q_norm.weight`, 'F32', [128]], [`${p}self_attn.k_norm.weight`, 'F32', [128]],
      [`${p}mlp.gate.weight`, 'BF16', [X, E]]);
    for (let x = 0; x < X; x++) {
      const e = `${p}mlp.experts.${x}.`;
      list.push([`${e}gate_proj.weight`, 'BF16', [I, E]], [`${e}up_proj.weight`, 'BF16', [I, E]], [`${e}down_proj.weight`, 'BF16', [E, I]]);
    }
  }
  list.sort((a, b) => ST_DTYPE_RANK[b[1]] - ST_DTYPE_RANK[a[1]] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let at = 0;
  const header = { __metadata__: { format: 'pt' } };
  const tensors = list.map(([name, dtype, shape]) => {
    const bytes = shape.reduce((a, b) => a * b, 1) * ST_BYTES[dtype];
    header[name] = { dtype, shape, data_offsets: [at, at + bytes] };
    const t = { name, dtype, shape, begin: at, end: at + bytes };
    at += bytes;
    return t;
  });
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const n = Buffer.byteLength(json);
  const head = Buffer.alloc(8 + n);
  head.writeBigUInt64LE(BigInt(n), 0);
  head.write(json, 8, 'utf8');
  return {
    head, length: 8 + n + at, headerLength: n,
    tensors: tensors.map((t) => ({ ...t, kilnDtype: t.dtype.toLowerCase(), byteOffset: 8 + n + t.begin, byteLength: t.end - t.begin })),
    metadata: [{ key: 'format', value: 'pt' }],
  };
}

// ------------------------------------------------------------ the files

export const FILES = [
  { file: 'llama2-7b.gguf', format: 'gguf', what: 'Llama-2-7B, 32,000 tokens', make: llama2 },
  { file: 'qwen3-8b.gguf', format: 'gguf', what: 'Qwen3-8B, 151,936 tokens', make: qwen3 },
  { file: 'gpt-oss-20b.gguf', format: 'gguf', what: 'gpt-oss-20b, 201,088 tokens', make: gptOss },
  { file: 'moe-20k.safetensors', format: 'safetensors', what: 'MoE, 20,046 tensors', make: moe },
];

/** Writes the files into `dir` (those missing or whose head differs) and returns their expected facts. */
export function latencyFiles(dir) {
  fs.mkdirSync(dir, { recursive: true });
  return FILES.map(({ file, format, what, make }) => {
    const spec = make();
    const full = path.join(dir, file);
    let fresh = false;
    try {
      const st = fs.statSync(full);
      if (st.size === spec.length) {
        const fd = fs.openSync(full, 'r');
        const have = Buffer.alloc(spec.head.length);
        fs.readSync(fd, have, 0, have.length, 0);
        fs.closeSync(fd);
        fresh = have.equals(spec.head);
      }
    } catch { /* absent */ }
    if (!fresh) {
      fs.rmSync(full, { force: true });
      fs.writeFileSync(full, spec.head);
      fs.truncateSync(full, spec.length);
    }
    return { file, format, what, path: full, ...spec };
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const dir = path.resolve(process.argv[2] ?? path.join(root, 'target/e2e-files/latency'));
  for (const f of latencyFiles(dir)) {
    console.log(`${f.path}: ${f.what}, ${f.tensors.length} tensors, ${f.metadata.length} metadata pairs, head ${f.head.length.toLocaleString('en-US')} B, file ${f.length.toLocaleString('en-US')} B (sparse)`);
  }
}
