/// JPEG: parses the segments from SOI to the first scan and, after it, watches the entropy-coded data for the
/// markers between scans (progressive files), so a metadata segment is dropped wherever it appears.
///
/// Kept: APP0 (JFIF), APP2 holding an ICC profile, APP14 (Adobe), the tables, frame and scan headers, restart
/// markers and the entropy-coded data byte for byte. Dropped: APP1 (Exif, XMP), APP13 (IPTC), every other APPn
/// (APP3 to APP12 and APP15, APP2 other than ICC such as MPF), COM, fill bytes, and everything after the EOI marker
/// (MPF secondary images, vendor trailers, appended videos). An Exif orientation of 2 to 8 is kept in a minimal Exif
/// segment of its own, written where the original was.
struct JPEGFilter: MediaFilter {
    private enum State {
        /// Gathering the two bytes of SOI.
        case start
        /// Between segments before the first scan: a 0xFF, then a marker code.
        case marker(sawFF: Bool)
        /// Gathering a segment's two length bytes.
        case length(code: UInt8)
        /// Gathering a segment's payload to judge it (APPn, COM, frame headers, DNL).
        case segment(code: UInt8)
        /// Copying the rest of a kept segment.
        case passing(remaining: Int)
        /// In or between scans: copying entropy-coded data, watching for a 0xFF that starts a marker.
        case entropy(sawFF: Bool)
        /// After EOI: dropping whatever follows.
        case trailing
    }

    private var state = State.start
    private var gather = Gather()
    private var inScans = false
    private var frameSeen = false
    private var orientationKept = false
    private var width = 0
    private var height = 0
    private var log = RemovalLog()

    init() { gather.start(2) }

    var dimensions: (width: Int, height: Int)? { width > 0 && height > 0 ? (width, height) : nil }
    var removed: [String] { log.names }

    private var afterSegment: State { inScans ? .entropy(sawFF: false) : .marker(sawFF: false) }

    mutating func consume(_ input: inout ByteCursor, into output: inout [UInt8]) throws(MediaError) {
        while true {
            switch state {
            case .start:
                guard gather.fill(from: &input) else { return }
                guard gather.bytes == [0xFF, 0xD8] else {
                    throw .malformed("the JPEG does not start with its start-of-image marker")
                }
                output += [0xFF, 0xD8]
                state = .marker(sawFF: false)
            case .marker(sawFF: false):
                guard let byte = input.next() else { return }
                guard byte == 0xFF else {
                    throw .malformed("the JPEG has a byte (0x\(hex(byte))) where a marker belongs, before its first "
                        + "scan")
                }
                state = .marker(sawFF: true)
            case .marker(sawFF: true), .entropy(sawFF: true):
                guard let code = input.next() else { return }
                try marker(code, into: &output)
            case .length(let code):
                guard gather.fill(from: &input) else { return }
                let length = gather.bytes.bigEndian(at: 0, count: 2)
                guard length >= 2 else {
                    throw .malformed("the JPEG has a segment (marker 0x\(hex(code))) whose length \(length) is shorter "
                        + "than its own length field")
                }
                try segment(code, payloadLength: length - 2, into: &output)
            case .segment(let code):
                guard gather.fill(from: &input) else { return }
                try judge(code, payload: gather.bytes, into: &output)
                state = afterSegment
            case .passing(let remaining):
                if remaining == 0 {
                    state = afterSegment
                    continue
                }
                guard !input.isEmpty else { return }
                let part = input.take(upTo: remaining)
                output.append(contentsOf: part)
                state = .passing(remaining: remaining - part.count)
            case .entropy(sawFF: false):
                guard !input.isEmpty else { return }
                output.append(contentsOf: input.take(until: 0xFF))
                if input.next() != nil { state = .entropy(sawFF: true) }
            case .trailing:
                log.dropTrailing(&input)
                return
            }
        }
    }

    mutating func finish(into output: inout [UInt8]) throws(MediaError) {
        guard case .trailing = state else { throw .malformed("the JPEG ends before its end-of-image marker") }
    }

    /// A marker code read after 0xFF.
    private mutating func marker(_ code: UInt8, into output: inout [UInt8]) throws(MediaError) {
        switch code {
        case 0xFF:  // a fill byte before a marker: dropped
            state = inScans ? .entropy(sawFF: true) : .marker(sawFF: true)
        case 0x00:
            guard inScans else { throw .malformed("the JPEG has a zero byte after 0xFF where a marker belongs") }
            output += [0xFF, 0x00]  // a stuffed 0xFF of entropy-coded data
            state = .entropy(sawFF: false)
        case 0x01, 0xD0 ... 0xD7:  // TEM and the restart markers stand alone
            output += [0xFF, code]
            state = afterSegment
        case 0xD8:
            throw .malformed("the JPEG has a second start-of-image marker")
        case 0xD9:
            guard inScans else { throw .malformed("the JPEG ends (end-of-image marker) before its first scan") }
            output += [0xFF, 0xD9]
            state = .trailing
        default:
            gather.start(2)
            state = .length(code: code)
        }
    }

    /// A segment's length is known: gather it to judge it, or copy it through.
    private mutating func segment(_ code: UInt8, payloadLength: Int, into output: inout [UInt8]) throws(MediaError) {
        if Self.isFrameHeader(code) || code == 0xDC || (0xE0 ... 0xEF).contains(code) || code == 0xFE {
            gather.start(payloadLength)  // at most 65533 bytes: the length field has 16 bits
            state = .segment(code: code)
            return
        }
        if code == 0xDA {
            guard frameSeen else { throw .malformed("the JPEG has a scan before its frame header") }
            inScans = true
        }
        Self.writeHeader(code, payloadLength: payloadLength, into: &output)
        state = .passing(remaining: payloadLength)
    }

    /// Keeps or drops a gathered segment.
    private mutating func judge(_ code: UInt8, payload: [UInt8], into output: inout [UInt8]) throws(MediaError) {
        if Self.isFrameHeader(code) {
            guard payload.count >= 6 else { throw .malformed("the JPEG has a frame header too short for its size") }
            if !frameSeen {
                height = payload.bigEndian(at: 1, count: 2)
                width = payload.bigEndian(at: 3, count: 2)
                guard width > 0 else { throw .malformed("the JPEG's frame header gives a width of 0") }
                frameSeen = true
            }
            return keep(code, payload, into: &output)
        }
        switch code {
        case 0xDC:  // DNL: the height, when the frame header left it 0
            guard payload.count >= 2 else { throw .malformed("the JPEG has a number-of-lines segment too short") }
            if height == 0 { height = payload.bigEndian(at: 0, count: 2) }
            keep(code, payload, into: &output)
        case 0xE0, 0xEE:
            keep(code, payload, into: &output)
        case 0xE2:
            if payload.starts(withASCII: "ICC_PROFILE\0") {
                keep(code, payload, into: &output)
            } else {
                log.note(payload.starts(withASCII: "MPF\0") ? "MPF" : "APP2")
            }
        case 0xE1:
            if payload.starts(withASCII: "Exif\0") {
                log.note("EXIF")
                if !orientationKept, !inScans, let orientation = JPEGExif.orientation(inSegment: payload),
                   (2 ... 8).contains(orientation) {
                    output += JPEGExif.orientationSegment(orientation)
                    orientationKept = true
                }
            } else {
                log.note(payload.starts(withASCII: "http://ns.adobe.com/") ? "XMP" : "APP1")
            }
        case 0xED:
            log.note(payload.starts(withASCII: "Photoshop 3.0\0") ? "IPTC" : "APP13")
        case 0xFE:
            log.note("comment")
        default:
            log.note("APP\(code - 0xE0)")
        }
    }

    private func keep(_ code: UInt8, _ payload: [UInt8], into output: inout [UInt8]) {
        Self.writeHeader(code, payloadLength: payload.count, into: &output)
        output += payload
    }

    /// SOF0 to SOF15, except DHT (C4), JPG (C8) and DAC (CC) which share the range.
    private static func isFrameHeader(_ code: UInt8) -> Bool {
        (0xC0 ... 0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }

    private static func writeHeader(_ code: UInt8, payloadLength: Int, into output: inout [UInt8]) {
        let length = payloadLength + 2
        output += [0xFF, code, UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
    }
}

/// Two hexadecimal digits, for error sentences.
func hex(_ byte: UInt8) -> String {
    (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
}
