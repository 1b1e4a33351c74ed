package warmpolicy

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// cell is one slot of one week, rounded to 18 bits: the peak executors
// wanted (8 bits, 0 when the slot was not observed), the starts (7 bits)
// and the share of them that started cold (3 bits, in sevenths).
type cell struct {
	peak, starts, cold uint8
}

// Codes of a cell's figures: a number below 2^exact is itself; a larger
// one keeps its leading 1+mant bits and its exponent, like a small
// floating-point number, up to the largest code.
type scale struct {
	exact, mant uint
	maxCode     uint32
}

var (
	// peakScale: exact to 63, within 1/16 above, up to 245,760 (the API
	// admits 100,000 executors). Rounded up, so a level read from it is
	// never short of the peak.
	peakScale = scale{exact: 6, mant: 4, maxCode: 254}
	// startsScale: exact to 31, within 1/16 above (rounded to nearest), up
	// to 122,880 starts in a slot.
	startsScale = scale{exact: 5, mant: 3, maxCode: 127}
)

const coldSteps = 7

func (c scale) code(v uint32, up bool) uint32 {
	if v < 1<<c.exact {
		return v
	}
	e := uint(bits.Len32(v)) - 1 - c.mant
	code := uint32(1)<<c.exact + uint32(e-(c.exact-c.mant))<<c.mant + (v>>e - 1<<c.mant)
	rem := v & (uint32(1)<<e - 1)
	if (up && rem != 0) || (!up && rem >= uint32(1)<<(e-1)) {
		code++
	}
	return min(code, c.maxCode)
}

func (c scale) value(code uint32) uint32 {
	if code < 1<<c.exact {
		return code
	}
	k := code - uint32(1)<<c.exact
	e := k>>c.mant + uint32(c.exact-c.mant)
	return (uint32(1)<<c.mant + k&(uint32(1)<<c.mant-1)) << e
}

// round is the cell of a slot's exact figures.
func round(f figures) cell {
	c := cell{
		peak:   uint8(peakScale.code(f.peak, true) + 1),
		starts: uint8(startsScale.code(f.starts, false)),
	}
	if f.starts > 0 {
		c.cold = uint8((uint64(f.cold)*coldSteps + uint64(f.starts)/2) / uint64(f.starts))
	}
	return c
}

// observed tells whether the slot was observed.
func (c cell) observed() bool { return c.peak != 0 }

// figures are a cell's figures, rounded as stored.
func (c cell) figures() figures {
	if !c.observed() {
		return figures{}
	}
	f := figures{peak: peakScale.value(uint32(c.peak) - 1), starts: startsScale.value(uint32(c.starts))}
	f.cold = (f.starts*uint32(c.cold) + coldSteps/2) / coldSteps
	return f
}

// The encoding, before base64 (unpadded standard alphabet):
//
//	format   1 byte: formatPacked or formatDeflated
//	open     uvarint: the open slot + 1 (0: nothing observed)
//	acc      3 uvarints: the open slot's exact peak, starts and cold starts
//	cells    Weeks × SlotsPerWeek cells of 18 bits, big-endian bit order,
//	         in ring order, packed into packedBytes (formatPacked) or
//	         DEFLATE-compressed (formatDeflated, when that is shorter)
//
// The longest is 1 + 10 + 3×5 + packedBytes = 6,074 bytes, 8,099 in base64.
const (
	formatPacked   = 1
	formatDeflated = 2
	cellBits       = 18
	packedBytes    = (Weeks*SlotsPerWeek*cellBits + 7) / 8
)

var encoding = base64.RawStdEncoding

// Encode is the history in a compact text form, at most MaxEncodedBytes
// long, that Decode reads back to an equal History. It allocates the
// string it returns and nothing else: its scratch space and compressor
// are reused across calls (encoders).
func (h *History) Encode() string {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	buf := append(e.raw[:0], formatPacked)
	open := uint64(0)
	if h.valid {
		open = uint64(h.open) + 1
	}
	buf = binary.AppendUvarint(buf, open)
	buf = binary.AppendUvarint(buf, uint64(h.acc.peak))
	buf = binary.AppendUvarint(buf, uint64(h.acc.starts))
	buf = binary.AppendUvarint(buf, uint64(h.acc.cold))
	head := len(buf)
	buf = h.pack(buf)
	if z := e.deflate(buf[head:]); len(z) < packedBytes {
		buf[0] = formatDeflated
		buf = append(buf[:head], z...)
	}
	e.raw = buf
	e.text = slices.Grow(e.text[:0], encoding.EncodedLen(len(buf)))[:encoding.EncodedLen(len(buf))]
	encoding.Encode(e.text, buf)
	return string(e.text)
}

// encoder is Encode's scratch space: the encoding before base64 (raw),
// the DEFLATE compressor and its output (z), and the base64 text. A
// compressor at BestCompression holds about 0.8 MB of tables, so one is
// made per encoder, not per Encode; encoders keeps a few.
type encoder struct {
	raw, text []byte
	z         bytes.Buffer
	zw        *flate.Writer
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{raw: make([]byte, 0, maxRawBytes)}
	e.zw, _ = flate.NewWriter(&e.z, flate.BestCompression) // the level is valid
	return e
}}

// maxRawBytes is the longest encoding before base64.
const maxRawBytes = 1 + binary.MaxVarintLen64 + 3*binary.MaxVarintLen32 + packedBytes

// deflate is p compressed, in e's buffer: valid until e's next use.
func (e *encoder) deflate(p []byte) []byte {
	e.z.Reset()
	e.zw.Reset(&e.z)
	_, _ = e.zw.Write(p) // a bytes.Buffer does not fail
	_ = e.zw.Close()
	return e.z.Bytes()
}

func (h *History) pack(buf []byte) []byte {
	var acc uint64
	var n uint
	for w := range h.cells {
		for _, c := range h.cells[w] {
			acc = acc<<cellBits | uint64(c.peak)<<10 | uint64(c.starts&0x7f)<<3 | uint64(c.cold&0x7)
			n += cellBits
			for n >= 8 {
				n -= 8
				buf = append(buf, byte(acc>>n))
			}
		}
	}
	if n > 0 {
		buf = append(buf, byte(acc<<(8-n)))
	}
	return buf
}

// Decode reads what Encode wrote. Anything else (truncated, altered or
// not an encoded history) returns an error and an empty History.
func Decode(s string) (*History, error) {
	h, err := decode(s)
	if err != nil {
		return &History{}, fmt.Errorf("cannot decode the demand history: %w", err)
	}
	return h, nil
}

var errCorrupt = errors.New("not an encoded demand history")

func decode(s string) (*History, error) {
	if len(s) > MaxEncodedBytes {
		return nil, fmt.Errorf("%d bytes is longer than an encoded history (at most %d)", len(s), MaxEncodedBytes)
	}
	raw, err := encoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	r := bytes.NewReader(raw)
	format, err := r.ReadByte()
	if err != nil || (format != formatPacked && format != formatDeflated) {
		return nil, fmt.Errorf("%w: unknown format", errCorrupt)
	}
	var v [4]uint64
	for i := range v {
		if v[i], err = binary.ReadUvarint(r); err != nil {
			return nil, fmt.Errorf("%w: truncated header", errCorrupt)
		}
	}
	open := v[0]
	if open > math.MaxInt64/2 || v[1] > math.MaxInt32 || v[2] > math.MaxInt32 || v[3] > v[2] {
		return nil, fmt.Errorf("%w: figures out of range", errCorrupt)
	}
	acc := figures{peak: uint32(v[1]), starts: uint32(v[2]), cold: uint32(v[3])}
	packed := make([]byte, packedBytes)
	var body io.Reader = r
	if format == formatDeflated {
		zr := inflater(r)
		defer inflaters.Put(zr)
		body = zr
	}
	if _, err := io.ReadFull(body, packed); err != nil {
		return nil, fmt.Errorf("%w: truncated cells", errCorrupt)
	}
	if n, _ := io.ReadFull(body, make([]byte, 1)); n != 0 || r.Len() != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errCorrupt)
	}
	h := &History{}
	if err := h.unpack(packed); err != nil {
		return nil, err
	}
	if open == 0 {
		if acc != (figures{}) {
			return nil, fmt.Errorf("%w: figures without an observation", errCorrupt)
		}
		return h, nil
	}
	h.open, h.valid, h.acc = int64(open-1), true, acc
	w, sl := split(h.open)
	if h.cells[w%Weeks][sl] != round(acc) {
		return nil, fmt.Errorf("%w: the open slot disagrees with its figures", errCorrupt)
	}
	return h, nil
}

// inflaters keeps the DEFLATE decompressors decode used (about 40 KB
// each), so that a provider that decodes every pool's history as it
// starts makes a few, not one a pool.
var inflaters sync.Pool

// inflater is a decompressor of r.
func inflater(r io.Reader) io.Reader {
	if zr, ok := inflaters.Get().(io.Reader); ok {
		_ = zr.(flate.Resetter).Reset(r, nil) // resetting a decompressor does not fail
		return zr
	}
	return flate.NewReader(r)
}

func (h *History) unpack(p []byte) error {
	var acc uint64
	var n uint
	i := 0
	for w := range h.cells {
		for s := range h.cells[w] {
			for n < cellBits {
				acc = acc<<8 | uint64(p[i])
				i++
				n += 8
			}
			n -= cellBits
			v := acc >> n
			acc &= 1<<n - 1
			c := cell{peak: uint8(v >> 10), starts: uint8(v>>3) & 0x7f, cold: uint8(v) & 0x7}
			if (!c.observed() && c != cell{}) || (c.starts == 0 && c.cold != 0) {
				return fmt.Errorf("%w: slot %d of week %d holds impossible figures", errCorrupt, s, w)
			}
			h.cells[w][s] = c
		}
	}
	return nil
}
