import CMicroHTTPD

extension ServerCore {
    /// Queues `response` on the connection (on its libmicrohttpd thread).
    func queue(_ response: Response, for context: ConnectionContext) -> MHD_Result {
        let handle: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            handle = bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress),
                                                .RESPMEM_MUST_COPY)
            }
        case .shared(let bytes):
            // libmicrohttpd sends from the bytes' own address and calls back (once) when it is done with them.
            let owner = Unmanaged.passRetained(bytes).toOpaque()
            handle = MHD_create_response_from_buffer_with_free_callback_cls(
                bytes.count, bytes.base, ServerCore.releaseSharedBytes, owner)
            if handle == nil { Unmanaged<SharedBytes>.fromOpaque(owner).release() }  // not called back then
        case .stream(let body):
            context.share() // already, when the stream was handed over; its writers and reader lock it
            handle = MHD_create_response_from_callback(
                body.length.map { UInt64($0) } ?? sb_mhd_size_unknown(),
                body.length == nil ? configuration.streamBlockSize : 64 * 1024, ServerCore.contentReader,
                Unmanaged.passRetained(context).toOpaque(), ServerCore.contentReaderFree)
            if let handle {
                context.inStreams = true
                streams.insert(context)
                if body.length == nil {
                    if context.request.method == "HEAD" {
                        // Ends with the connection too: chunked, libmicrohttpd 0.9.75 sends a last chunk after the
                        // head, a body HEAD must not have. Nothing is ever written to it directly.
                        _ = sb_mhd_response_close_delimited(handle)
                    } else if configuration.directStreamWrites && sb_mhd_response_close_delimited(handle) == 0 {
                        context.state.withLock { $0.directWrites = .untried }
                    }
                }
            }
        }
        guard let handle else { return .NO }
        // In place, not through the list's iterator (a copy of each field, its two strings retained and released);
        // `withCString`, not the implicit conversion: that one copies a small string into a fresh array.
        response.headers.forEachInPlace { field in
            field.name.withCString { name in
                field.value.withCString { value in _ = MHD_add_response_header(handle, name, value) }
            }
        }
        if draining.load(ordering: .relaxed) {
            MHD_add_response_header(handle, "Connection", "close")
        }
        let result = MHD_queue_response(context.connection, UInt32(response.status), handle)
        MHD_destroy_response(handle)
        return result
    }

    /// Releases the bytes of a `.shared` body once libmicrohttpd has destroyed the response that sent them.
    static let releaseSharedBytes: MHD_ContentReaderFreeCallback = { owner in
        guard let owner else { return }
        Unmanaged<SharedBytes>.fromOpaque(owner).release()
    }

    /// Copies queued stream bytes out to libmicrohttpd, or suspends the connection until more arrive.
    func read(_ context: ConnectionContext, into destination: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        let lowWater = configuration.streamHighWater / 2
        var writer: WriterWaiter?
        let result = context.state.withLock { state -> Int in
            switch state.read(max: max) {
            case .copy(let count):
                state.buffer.withUnsafeBytes { source in
                    UnsafeMutableRawPointer(destination).copyMemory(
                        from: source.baseAddress! + state.readOffset, byteCount: count)
                }
                writer = state.consume(count, lowWater: lowWater)
                return count
            case .endOfStream:
                return -1 // MHD_CONTENT_READER_END_OF_STREAM
            case .error:
                return -2 // MHD_CONTENT_READER_END_WITH_ERROR
            case .suspend:
                // Under the lock, so a writer cannot resume before libmicrohttpd has suspended.
                MHD_suspend_connection(context.connection)
                return 0
            }
        }
        writer?.resume()
        return result
    }

    static let contentReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
        let context = Unmanaged<ConnectionContext>.fromOpaque(cls!).takeUnretainedValue()
        return context.core.read(context, into: buffer!, max: max)
    }

    static let contentReaderFree: MHD_ContentReaderFreeCallback = { cls in
        Unmanaged<ConnectionContext>.fromOpaque(cls!).release()
    }
}
