# The Hiera 3 backend `hierad`: each lookup is one HTTP request to a hierad
# server, which resolves, merges and interpolates exactly as Hiera 3.10
# does over YAML files holding the same data.
#
# hiera.yaml:
#
#   :backends:
#     - hierad
#   :hierad:
#     :url: http://hierad.example:8750        # or a list, tried in order
#     :environment: "1"                       # a %{} template
#     :level: "nodes=%{::fqdn}"               # a %{} template; none = root
#     :connect_timeout: 2                     # seconds
#     :read_timeout: 10
#     :token: secret                          # or :user: and :password:
#     :ca_file: /etc/hierad/ca.pem            # for https:// URLs
#     :failure: error                         # or stale
#
# What is sent: the key, the resolution type, the hierarchy as written in
# hiera.yaml (the server interpolates it lazily, level by level, as the
# yaml backend does, so `%{hiera('x')}` in a level behaves the same), the
# order override, :merge_behavior and :deep_merge_options, and the scope
# variables interpolation needs.
require_relative '../../puppet_x/hierad/client'

class Hiera
  module Backend
    class Hierad_backend
      LOOKUP_PATH = '/api/v1/lookup'.freeze
      SCOPE_TTL = 60.0
      # :failure: values. `stale` answers from the last answer this process
      # got for the very same request when no server answers; without one
      # it fails like `error`. Neither ever turns an outage into not-found.
      FAILURE_MODES = %w[error stale].freeze
      STALE_MAX = 10_000

      def initialize
        Hiera.debug('Hiera hierad backend starting')
        @mutex = Mutex.new
        @client = nil
        @client_config = nil
        @static = nil
        @static_key = nil
        @scope_names = {}
        @stale = {}
      end

      def lookup(key, scope, order_override, resolution_type, context)
        Hiera.debug("Looking up #{key} in hierad backend")
        settings = self.settings
        env = template(settings, :environment, scope, order_override)
        raise Hiera::InvalidConfigurationError, 'hierad: :environment: is not set in the :hierad: section of hiera.yaml' if env.nil? || env.to_s.empty?

        level = template(settings, :level, scope, order_override)
        body = request_body(env, level, key, scope, order_override, resolution_type)
        answer = post(settings, body)
        if answer['found']
          value = answer['value']
          Hiera.debug("Found #{key} in hierad")
          value
        else
          throw :no_such_key
        end
      end

      # The `:hierad:` section, with String or Symbol keys.
      def settings
        raw = Config[:hierad] || {}
        raise Hiera::InvalidConfigurationError, "hierad: the :hierad: section of hiera.yaml must be a Hash, not #{raw.class}" unless raw.is_a?(Hash)

        raw.each_with_object({}) { |(k, v), h| h[k.to_sym] = v }
      end

      private

      # A %{} template of the :hierad: section, interpolated as Hiera
      # interpolates :datadir: (the same guard against hiera() loops).
      def template(settings, name, scope, order_override)
        value = settings[name]
        return nil if value.nil?
        unless value.is_a?(String) || (name == :environment && value.is_a?(Integer))
          raise Hiera::InvalidConfigurationError, "hierad: :#{name}: must be a String (a %{} template), not #{value.class}"
        end
        return value.to_s unless value.is_a?(String)
        return value unless value.include?('%{')

        Backend.interpolate_config(value, scope, order_override)
      end

      def client(settings)
        @mutex.synchronize do
          config = settings.reject { |k, _| %i[environment level failure].include?(k) }
          unless @client && @client_config == config
            @client&.close
            @client = PuppetX::Hierad::Client.new(config)
            @client_config = config
          end
          @client
        end
      end

      # The parts of a request that come from hiera.yaml, as JSON text,
      # rebuilt only when the configuration changes.
      def static_json
        key = [Config[:hierarchy], Config[:merge_behavior], Config[:deep_merge_options]]
        return @static if @static && @static_key.each_with_index.all? { |v, i| v.equal?(key[i]) }

        hierarchy = [Config[:hierarchy]].flatten.map { |level| hierarchy_level(level) }
        options = Config[:deep_merge_options] || {}
        options = symbol_entries(options) if options.is_a?(Hash)
        @static_key = key
        @static = ',"hierarchy":' + JSON.generate(hierarchy) +
                  ',"merge_behavior":' + PuppetX::Hierad::Wire.dump(Config[:merge_behavior]) +
                  ',"deep_merge_options":' + PuppetX::Hierad::Wire.dump(options)
      end

      # A level as the server takes it: text. Hiera turns a non-String level
      # into a file name with to_s; nil cannot be sent (it names `.yaml`).
      def hierarchy_level(level)
        case level
        when String then level
        when nil
          raise Hiera::InvalidConfigurationError, 'hierad: a hierarchy level is nil (~), which the hierad backend cannot look up'
        else level.to_s
        end
      end

      # deep_merge reads Symbol option keys only and Hiera ignores String
      # ones, so only Symbol keys are sent, as JSON names (the server reads
      # the names of these objects as Symbols).
      def symbol_entries(hash)
        hash.each_with_object({}) { |(k, v), h| h[k.to_s] = v if k.is_a?(Symbol) }
      end

      def resolution_json(resolution_type)
        case resolution_type
        when nil, :priority then '"priority"'
        when :array then '"array"'
        when :hash then '"hash"'
        when Hash then PuppetX::Hierad::Wire.dump(symbol_entries(resolution_type))
        else
          # Any other Symbol or a String means priority to Hiera.
          '"priority"'
        end
      end

      # The key as Hiera's dotted-key syntax spells the one segment the
      # backend was given (the server splits keys again).
      def key_json(key)
        text = key.to_s
        if text.include?('.') || text.include?('"') || text.include?("'")
          text = text.include?('"') ? "'#{text}'" : "\"#{text}\""
        end
        JSON.generate(text)
      end

      def request_body(env, level, key, scope, order_override, resolution_type)
        body = +'{"environment":'
        body << JSON.generate(env.to_s)
        body << ',"level":' << JSON.generate(level) if level && !level.empty?
        body << ',"key":' << key_json(key)
        body << ',"resolution":' << resolution_json(resolution_type)
        body << static_json
        body << ',"order_override":' << PuppetX::Hierad::Wire.dump(order_override) unless order_override.nil?
        body << ',"scope":' << PuppetX::Hierad::Wire.dump(scope_for(env, scope, order_override))
        body << '}'
      end

      # A plain Hash scope (the hiera command, tests) is sent whole. A
      # Puppet scope cannot be listed: send the variables the environment's
      # data and this hierarchy refer to.
      def scope_for(env, scope, order_override)
        return scope if scope.is_a?(Hash)

        names = scope_names(env) | template_names([Config[:hierarchy], order_override].flatten)
        names.each_with_object({}) do |name, sent|
          sent[name] = scope[name] if scope.include?(name)
        end
      end

      def scope_names(env)
        cached = @mutex.synchronize { @scope_names[env] }
        return cached[1] if cached && now - cached[0] < SCOPE_TTL

        response = client(settings).get("/api/v1/environments/#{PuppetX::Hierad::Escape.component(env)}/scope")
        raise PuppetX::Hierad::Error, "hierad: #{client(settings).urls.join(', ')}: GET scope of environment #{env}: HTTP #{response.status}: #{response.error_message}" unless response.status == 200

        names = JSON.parse(response.body).fetch('variables')
        @mutex.synchronize { @scope_names[env] = [now, names] }
        names
      end

      # Variables named by %{name} and %{scope('name')} in the templates.
      def template_names(templates)
        templates.grep(String).flat_map do |t|
          t.scan(/%\{([^}]*)\}/).map do |(token)|
            token = token.strip
            token = Regexp.last_match(1) if token =~ /\Ascope\(["'](.*)["']\)\z/
            next nil if token.empty? || token.include?('(')

            token.split('.').first.to_s.delete(%q("'))
          end
        end.compact.uniq
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      def failure_mode(settings)
        mode = (settings[:failure] || 'error').to_s
        raise Hiera::InvalidConfigurationError, "hierad: :failure: must be one of #{FAILURE_MODES.join(', ')}, not #{mode.inspect}" unless FAILURE_MODES.include?(mode)

        mode
      end

      # Sends the request; returns the decoded answer {"found"=>…, "value"=>…}.
      def post(settings, body)
        mode = failure_mode(settings)
        client = client(settings)
        begin
          response = client.post(LOOKUP_PATH, body)
        rescue PuppetX::Hierad::Error => e
          return stale_answer(body, e) if mode == 'stale'

          raise
        end
        case response.status
        when 200
          answer = PuppetX::Hierad::Wire.load(response.body)
          remember(body, answer) if mode == 'stale'
          answer
        when 422
          error = JSON.parse(response.body)
          raise PuppetX::Hierad::Errors.hiera_exception(error['class'], error['message'])
        else
          raise PuppetX::Hierad::Error, "hierad: #{client.urls.join(', ')} refused the lookup: HTTP #{response.status}: #{response.error_message}"
        end
      end

      def remember(body, answer)
        @mutex.synchronize do
          @stale.delete(body)
          @stale.shift if @stale.size >= STALE_MAX
          @stale[body] = answer
        end
      end

      def stale_answer(body, error)
        answer = @mutex.synchronize { @stale[body] }
        raise error unless answer

        Hiera.warn("#{error.message}; answering from the last answer received (failure: stale)")
        answer
      end
    end
  end
end
