/// The limits and checks on attachments, from the service's configuration.
public struct AttachmentPolicy: Sendable {
    /// The largest file accepted, in bytes (`ATTACHMENT_MAX_BYTES`).
    public var maximumBytes: Int
    /// The most bytes of finished attachments one tenant may keep (`ATTACHMENT_QUOTA_BYTES_PER_TENANT`).
    public var quotaBytesPerTenant: Int64
    /// How long an upload no message carries is kept (`ATTACHMENT_ORPHAN_HOURS`).
    public var unusedFor: Duration
    /// Uploads one user (or API key) may start per minute (`ATTACHMENT_UPLOADS_PER_MINUTE`).
    public var uploadsPerMinute: Int
    /// A ClamAV daemon's Unix socket (`ATTACHMENT_CLAMD_SOCKET`): every upload is scanned as it streams, an infected
    /// one refused; nil leaves files `not_scanned`.
    public var clamdSocket: String?

    /// The defaults: 10 MiB files, 10 GiB per tenant, unused uploads kept 24 hours, 30 uploads a minute.
    public init(maximumBytes: Int = 10 << 20, quotaBytesPerTenant: Int64 = 10 << 30, unusedFor: Duration = .seconds(24 * 3600),
                uploadsPerMinute: Int = 30, clamdSocket: String? = nil) {
        self.maximumBytes = maximumBytes
        self.quotaBytesPerTenant = quotaBytesPerTenant
        self.unusedFor = unusedFor
        self.uploadsPerMinute = uploadsPerMinute
        self.clamdSocket = clamdSocket
    }

    /// A staged upload whose process died mid-way is removed after this long (no upload takes that long: the server
    /// cuts connections idle for a minute).
    public static let stagedFor = Duration.seconds(6 * 3600)
}
