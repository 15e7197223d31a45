// The tensor table's rows, made on demand from the module's columns
// (KilnFile.tensorColumns(): the core's Inspection::tensor_columns). A
// row is a small object that reads the members of the JSON form's tensor
// object (spec/json.md, section 8) from the columns when they are asked
// for, so that a file of 20,000 tensors makes 20,000 small objects at
// open, not 20,000 objects of 17 members. A row's JSON (JSON.stringify,
// toJSON()) is that tensor's object in tensorsJson(), member for member.
// The module's tensorRows() and the inspector page (which gets the
// columns from its worker) both make rows here.

/** Numbers a row takes in the columns. */
const SLOTS = 15;

/**
 * The rows of columns `text` (the JSON text `[names, strings, full]`)
 * and `nums` (a Float64Array): one per tensor, in listing order.
 * @param {string} text
 * @param {Float64Array} nums
 */
export function tensorRows(text, nums) {
  const [names, strings, full] = JSON.parse(text);
  const table = { names, strings, nums };
  const rows = new Array(names.length);
  for (let i = 0; i < rows.length; i++) rows[i] = new TensorRow(table, i);
  // Rows the columns do not hold (a quantization link, a number past
  // 2^53 - 1): their objects as tensorsJson() writes them.
  for (const [i, object] of full) rows[i] = object;
  return rows;
}

class TensorRow {
  #t; #row; #at; #shape = null;

  constructor(table, row) {
    this.#t = table;
    this.#row = row;
    this.#at = row * SLOTS;
  }

  #n(k) { return this.#t.nums[this.#at + k]; }

  #s(k) {
    const j = this.#t.nums[this.#at + k];
    return j < 0 ? null : this.#t.strings[j];
  }

  get index() { return this.#n(0); }
  get name() { return this.#t.names[this.#row]; }
  get directory() { return this.#n(1); }
  get index_in_directory() { return this.#n(2); }
  get path() { return this.#s(3); }
  get file() { return this.#s(4); }
  get dtype() { return this.#s(5); }
  get dtype_code() { const c = this.#n(6); return c < 0 ? null : c; }
  get layout() { return this.#s(7); }
  get block_size() { return this.#n(8); }
  get shape() {
    if (this.#shape === null) {
      const nums = this.#t.nums, at = nums[this.#at + 9], rank = nums[this.#at + 10];
      const shape = new Array(rank);
      for (let k = 0; k < rank; k++) shape[k] = nums[at + k];
      this.#shape = shape;
    }
    return this.#shape;
  }
  get elements() { const e = this.#n(11); return e < 0 ? null : e; }
  get offset() { return this.#n(12); }
  get bytes() { return this.#n(13); }
  get quant() { return null; }
  get in_place() { return this.#n(14) < 0; }
  get not_in_place() { return this.#s(14); }

  /** The tensor's object of tensorsJson(), its members in its order. */
  toJSON() {
    return {
      index: this.index, name: this.name, directory: this.directory, index_in_directory: this.index_in_directory,
      path: this.path, file: this.file, dtype: this.dtype, dtype_code: this.dtype_code, layout: this.layout,
      block_size: this.block_size, shape: this.shape, elements: this.elements, offset: this.offset, bytes: this.bytes,
      quant: this.quant, in_place: this.in_place, not_in_place: this.not_in_place,
    };
  }
}
