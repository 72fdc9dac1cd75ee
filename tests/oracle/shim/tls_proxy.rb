# For tests/oracle/shim: a TLS-terminating reverse proxy that demands credentials,
# in front of a plain-HTTP hierad, as a site would put nginx in front of it.
# Ruby's standard library only.
#
#   ruby tls_proxy.rb CERT KEY UPSTREAM_URL ACCEPTED_AUTHORIZATION...
#
# Prints `listening on https://127.0.0.1:PORT` once it accepts. Requests
# whose Authorization header is not one of the accepted values get 401;
# the others go to the upstream over one keep-alive connection per client
# connection. Unauthenticated control routes:
#   GET  /__proxy/stats  {"connections", "requests", "refused", "handshake_failures"}
#   POST /__proxy/close  stop listening and drop every connection (an outage)
require 'socket'
require 'openssl'
require 'net/http'
require 'json'

cert_file, key_file, upstream, *accepted = ARGV
abort 'usage: tls_proxy.rb CERT KEY UPSTREAM_URL AUTHORIZATION...' if accepted.empty?
upstream = URI(upstream)

ctx = OpenSSL::SSL::SSLContext.new
ctx.cert = OpenSSL::X509::Certificate.new(File.read(cert_file))
ctx.key = OpenSSL::PKey.read(File.read(key_file))

listener = TCPServer.new('127.0.0.1', 0)
stats = Hash.new(0)
lock = Mutex.new
clients = []
count = ->(name) { lock.synchronize { stats[name] += 1 } }

reply = lambda do |sock, status, headers, body|
  head = +"HTTP/1.1 #{status} X\r\n"
  headers.each { |k, v| head << "#{k}: #{v}\r\n" }
  head << "Content-Length: #{body.bytesize}\r\n\r\n"
  sock.write(head + body)
end

serve = lambda do |sock|
  http = Net::HTTP.new(upstream.host, upstream.port)
  http.start
  loop do
    line = sock.gets or break
    method, path, = line.split(' ')
    headers = {}
    while (h = sock.gets) && h != "\r\n"
      name, value = h.split(':', 2)
      headers[name.downcase] = value.strip
    end
    body = sock.read(headers['content-length'].to_i)
    case [method, path]
    when ['GET', '/__proxy/stats']
      reply.call(sock, 200, { 'Content-Type' => 'application/json' }, lock.synchronize { JSON.generate(stats) })
      next
    when ['POST', '/__proxy/close']
      # Everything else first: the caller's next request must find it gone.
      listener.close
      lock.synchronize { (clients - [sock]).each { |c| c.close rescue nil } }
      reply.call(sock, 200, {}, '')
      break
    end
    unless accepted.include?(headers['authorization'])
      count.call('refused')
      reply.call(sock, 401, { 'Content-Type' => 'application/json' },
                 '{"error":"unauthorized","message":"credentials required"}')
      next
    end
    count.call('requests')
    request = Net::HTTPGenericRequest.new(method, !body.empty?, true, path)
    %w[content-type if-none-match accept].each { |k| request[k] = headers[k] if headers[k] }
    request.body = body unless body.empty?
    response = http.request(request)
    out = {}
    %w[content-type etag x-cache].each { |k| out[k] = response[k] if response[k] }
    reply.call(sock, response.code.to_i, out, response.body.to_s)
  end
rescue IOError, SystemCallError, OpenSSL::SSL::SSLError
  nil
ensure
  sock.close rescue nil
  http&.finish rescue nil
end

puts "listening on https://127.0.0.1:#{listener.addr[1]}"
$stdout.flush
loop do
  tcp = begin
    listener.accept
  rescue IOError, SystemCallError
    break
  end
  Thread.new(tcp) do |t|
    ssl = OpenSSL::SSL::SSLSocket.new(t, ctx)
    ssl.sync_close = true
    begin
      ssl.accept
    rescue OpenSSL::SSL::SSLError, IOError, SystemCallError
      count.call('handshake_failures')
      t.close
      next
    end
    count.call('connections')
    lock.synchronize { clients << ssl }
    serve.call(ssl)
  end
end
# Closed by /__proxy/close: stay up, refusing connections, until killed.
sleep
