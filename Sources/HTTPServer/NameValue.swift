/// A name and its value as stored by `HTTPHeaders` and `RouteParameters`. A struct, not a `(name, value)` tuple: an
/// array of tuples is destroyed through the runtime's generic tuple code, field by field through metadata, and every
/// request and response drops such lists.
@usableFromInline
struct NameValue: Sendable {
    @usableFromInline var name: String
    @usableFromInline var value: String

    @inlinable init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
