/// Why an upload was refused: its bytes break its format's rules, or they use a layout this module cannot clean.
///
/// Either way the file must be discarded whole, including any bytes `MediaSanitizer.feed` returned before the throw.
public enum MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not a well-formed file of the type: a sentence naming the type and what is wrong.
    case malformed(String)
    /// The file may be valid, but its metadata could not be removed safely (said in a sentence naming the type).
    case unsupported(String)

    public var description: String {
        switch self {
        case .malformed(let sentence): "malformed: \(sentence)"
        case .unsupported(let sentence): "unsupported: \(sentence)"
        }
    }
}
