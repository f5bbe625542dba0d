extension ServerSentEvent {
    /// The bytes of the event-stream syntax. UTF-8 never uses them inside a multi-byte character, so the encoder
    /// can split and sanitise text byte by byte.
    enum ASCII {
        static let nul: UInt8 = 0x00
        static let lf: UInt8 = 0x0A
        static let cr: UInt8 = 0x0D
        static let space: UInt8 = 0x20
        static let colon: UInt8 = 0x3A
    }

    /// Appends `name: value` as one line, with each CR and LF in `value` replaced by a space.
    static func appendField(_ name: String, _ value: some Sequence<UInt8>, to bytes: inout [UInt8]) {
        appendLineStart(name, to: &bytes)
        var isEmpty = true
        for byte in value {
            if isEmpty {
                bytes.append(ASCII.space)
                isEmpty = false
            }
            bytes.append(byte == ASCII.cr || byte == ASCII.lf ? ASCII.space : byte)
        }
        bytes.append(ASCII.lf)
    }

    /// Appends one `field: line` per line of `text`, splitting at CRLF, lone CR and lone LF as a client does.
    ///
    /// An empty line is written as a bare `field:`; an empty `field` writes comment lines.
    static func appendLines(of text: String, field: String, to bytes: inout [UInt8]) {
        appendLineStart(field, to: &bytes)
        var lineIsEmpty = true
        var afterCR = false
        for byte in text.utf8 {
            if byte == ASCII.lf, afterCR {
                afterCR = false  // the LF of a CRLF: the CR already ended the line
                continue
            }
            afterCR = byte == ASCII.cr
            if byte == ASCII.cr || byte == ASCII.lf {
                bytes.append(ASCII.lf)
                appendLineStart(field, to: &bytes)
                lineIsEmpty = true
            } else {
                if lineIsEmpty {
                    bytes.append(ASCII.space)
                    lineIsEmpty = false
                }
                bytes.append(byte)
            }
        }
        bytes.append(ASCII.lf)
    }

    private static func appendLineStart(_ field: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: field.utf8)
        bytes.append(ASCII.colon)
    }
}
