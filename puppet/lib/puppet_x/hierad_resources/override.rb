# The rules of `override_resources` (docs/spec/override-resources.md), apart
# from Puppet's catalog so they can be tested alone: which entries of the
# data are processed, which missing resources are created, and the
# parameters each gets once `defaults` are applied.
#
# The data, as the node's Hiera gives it:
#   configuration:          { <type> => { <title> => { <param> => value } } }
#   configuration_options:  { create, types_filter, titles_filter,
#                             types_create_exception, titles_create_exception }
#   defaults:               { <type> => { <param> => value } }
#
# or, given `type:` (the Fuel specification's `override_resources {'package': ...}`,
# <https://blueprints.launchpad.net/fuel/+spec/puppet-resource-override>, as
# fuel-library's first version of the type took it), the same without the
# type level: configuration { <title> => { <param> => value } } and
# defaults { <param> => value }, both of that one type.
#
# A shape this file does not accept is an OverrideError naming where it is
# (`configuration.file./tmp/x`) and what was expected: a typo fails the
# catalog at once rather than a deployment later.
module PuppetX
  module Hierad
    class OverrideError < StandardError; end

    # One override_resources instance's data, checked and normalised.
    class Override
      # The options and their defaults (docs/spec/override-resources.md: create is true unless
      # the data says otherwise; empty lists filter nothing out).
      OPTIONS = {
        'create' => true,
        'types_filter' => [],
        'titles_filter' => [],
        'types_create_exception' => [],
        'titles_create_exception' => []
      }.freeze

      # One resource the data asks for: its type and title and the
      # parameters to set (defaults of its type below the data's own).
      Entry = Struct.new(:type, :title, :parameters)

      attr_reader :configuration, :options, :defaults

      # `options` are `configuration_options`; `overrides` are options given
      # as the type's own parameters, which win over them (nil: not given).
      # `type`: the data is of that one type (the per-type form).
      def initialize(configuration, options = {}, defaults = {}, overrides = {}, type: nil)
        @type = type
        if type
          @configuration = { type => nested(configuration, 'configuration', 2) }
          @defaults = { type => nested(defaults, 'defaults', 1) }
        else
          @configuration = nested(configuration, 'configuration', 3)
          @defaults = nested(defaults, 'defaults', 2)
        end
        @options = check_options(hash(options, 'configuration_options').merge(overrides.compact))
      end

      # Where the data gives the parameters of `type` (and `title`), as the
      # user wrote it: `configuration.file./tmp/x`, `defaults.file`; without
      # the type in the per-type form.
      def where(part, type, title = nil)
        [part, (type unless @type), title].compact.join('.')
      end

      # Whether this instance processes resources of `type` titled `title`
      # (types_filter, titles_filter; an empty list lets everything through).
      def processed?(type, title = nil)
        listed = ->(list, name) { list.empty? || list.include?(name) }
        listed.call(@options['types_filter'], type) && (title.nil? || listed.call(@options['titles_filter'], title))
      end

      # Whether a resource the catalog lacks is created. With `create` true
      # the exception lists name what is not created; with `create` false
      # they name the only things that are. Either list may name it.
      def create?(type, title)
        excepted = @options['types_create_exception'].include?(type) ||
                   @options['titles_create_exception'].include?(title)
        @options['create'] ? !excepted : excepted
      end

      # The types this instance processes, in the data's order: those of
      # `configuration` and of `defaults` (a typo there is an error too).
      def types
        (@configuration.keys + @defaults.keys).uniq.select { |type| processed?(type) }
      end

      # Every processed resource of the data, with its type's defaults
      # below the parameters the data gives for it.
      def entries
        @configuration.flat_map do |type, resources|
          next [] unless processed?(type)

          resources.filter_map do |title, parameters|
            next unless processed?(type, title)

            Entry.new(type, title, @defaults.fetch(type, {}).merge(parameters))
          end
        end
      end

      private

      def hash(value, where)
        return {} if value.nil?
        raise OverrideError, "#{where}: expected a Hash, got #{describe(value)}" unless value.is_a?(Hash)

        value
      end

      # A Hash of non-empty String keys, `depth` levels of them; the last
      # level's values are free.
      def nested(value, where, depth)
        hash(value, where).each do |key, inner|
          unless key.is_a?(String) && !key.empty?
            raise OverrideError, "#{where}: expected a non-empty String key, got #{describe(key)}"
          end
          next if depth == 1

          raise OverrideError, "#{where}.#{key}: expected a Hash, got #{describe(inner)}" unless inner.is_a?(Hash)

          nested(inner, "#{where}.#{key}", depth - 1)
        end
      end

      def check_options(given)
        unknown = given.keys - OPTIONS.keys
        unless unknown.empty?
          raise OverrideError, "configuration_options: unknown option #{unknown.map(&:inspect).join(', ')} " \
                               "(known: #{OPTIONS.keys.join(', ')})"
        end
        options = OPTIONS.merge(given)
        unless [true, false].include?(options['create'])
          raise OverrideError, "configuration_options.create: expected true or false, got #{describe(options['create'])}"
        end
        OPTIONS.each_key do |name|
          next if name == 'create'

          list = options[name]
          unless list.is_a?(Array) && list.all? { |v| v.is_a?(String) }
            raise OverrideError, "configuration_options.#{name}: expected a list of Strings, got #{describe(list)}"
          end
        end
        options
      end

      def describe(value)
        "#{value.class} #{value.inspect[0, 80]}"
      end
    end
  end
end
